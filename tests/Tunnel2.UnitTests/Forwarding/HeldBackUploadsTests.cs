using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Forwarding;

/// <summary>
/// The clock over uploads held back by the peer's windows: a caller reset while its bytes still wait in the server's
/// kernel is noticed at the next look and its exchange aborted; a caller still there, or an upload that is moving, is
/// left alone. Real sockets for the callers, a real uplink pair for the streams.
/// </summary>
public sealed class HeldBackUploadsTests : IDisposable
{
    private const int Window = 16 * 1024;
    private static readonly UplinkSettings FixedWindow = new() { InitialStreamWindow = Window, MaxStreamWindow = Window };

    private readonly HeldBackUploads _uploads = new();
    private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);

    public HeldBackUploadsTests()
    {
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen();
    }

    public void Dispose()
    {
        _uploads.Dispose();
        _listener.Dispose();
    }

    [Fact]
    public async Task A_held_back_upload_whose_caller_was_reset_is_aborted_at_the_next_look()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        UplinkStream stream = await HeldBackStreamAsync(pair);
        (Socket caller, Socket accepted) = await ConnectAsync();
        using (accepted)
        {
            var exchange = new WatchedExchange(accepted);
            using HeldBackUploads.Watch watch = _uploads.Start(stream, exchange.Context);
            await caller.SendAsync(new byte[64 * 1024], SocketFlags.None); // what the server's kernel holds, unread
            _uploads.Sweep();
            Assert.False(exchange.Aborted, "the caller is still there");

            caller.LingerState = new LingerOption(true, 0);
            caller.Dispose();

            await Eventually.WaitUntilAsync(() =>
            {
                _uploads.Sweep();
                return exchange.Aborted;
            }, "the reset caller's exchange is aborted");
            Assert.True(accepted.Available > 0, "the kernel still held the caller's bytes: no read could have seen the reset");
        }
    }

    [Fact]
    public async Task An_exchange_that_ended_between_the_look_and_the_abort_neither_ends_the_sweep_nor_spares_the_others()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        UplinkStream endedStream = await HeldBackStreamAsync(pair);
        UplinkStream heldStream = await HeldBackStreamAsync(pair);
        (Socket endedCaller, Socket endedAccepted) = await ConnectAsync();
        (Socket heldCaller, Socket heldAccepted) = await ConnectAsync();
        using (endedAccepted)
        using (heldAccepted)
        {
            var ended = new WatchedExchange(endedAccepted) { DisposedBeforeAbort = true };
            var held = new WatchedExchange(heldAccepted);
            using HeldBackUploads.Watch endedWatch = _uploads.Start(endedStream, ended.Context);
            using HeldBackUploads.Watch heldWatch = _uploads.Start(heldStream, held.Context);
            foreach (Socket caller in new[] { endedCaller, heldCaller })
            {
                caller.LingerState = new LingerOption(true, 0);
                caller.Dispose();
            }

            await Eventually.WaitUntilAsync(
                () => CallerConnection.HasFailed(ended.Context) && CallerConnection.HasFailed(held.Context),
                "the kernel reports both resets");

            // On the timer's thread an exception here ended the server process.
            Exception? thrown = Record.Exception(_uploads.Sweep);

            Assert.Null(thrown);
            Assert.True(held.Aborted, "the other reset caller's exchange is still aborted");
        }
    }

    [Fact]
    public async Task An_upload_that_still_has_credit_is_not_asked_about_its_caller()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        UplinkStream stream = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/moving", []), endStream: false);
        (Socket caller, Socket accepted) = await ConnectAsync();
        using (accepted)
        {
            var exchange = new WatchedExchange(accepted);
            using HeldBackUploads.Watch watch = _uploads.Start(stream, exchange.Context);
            caller.LingerState = new LingerOption(true, 0);
            caller.Dispose();
            await Eventually.WaitUntilAsync(() => CallerConnection.HasFailed(exchange.Context), "the kernel reports the reset");

            _uploads.Sweep();

            Assert.True(stream.HasSendCredit);
            Assert.False(exchange.Aborted, "a moving upload finds its caller's reset by reading; the clock spends no syscall on it");
        }
    }

    [Fact]
    public async Task A_finished_upload_is_no_longer_watched()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        UplinkStream stream = await HeldBackStreamAsync(pair);
        (Socket caller, Socket accepted) = await ConnectAsync();
        using (accepted)
        {
            var exchange = new WatchedExchange(accepted);
            using (_uploads.Start(stream, exchange.Context))
            {
                Assert.Equal(1, _uploads.Count);
            }

            caller.LingerState = new LingerOption(true, 0);
            caller.Dispose();
            await Eventually.WaitUntilAsync(() => CallerConnection.HasFailed(exchange.Context), "the kernel reports the reset");
            _uploads.Sweep();

            Assert.Equal(0, _uploads.Count);
            Assert.False(exchange.Aborted);
        }
    }

    /// <summary>A stream whose body used up its window, the peer never reading it.</summary>
    private static async Task<UplinkStream> HeldBackStreamAsync(UplinkPair pair)
    {
        UplinkStream stream = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/held", []), endStream: false);
        _ = stream.SendBodyAsync(PipeReader.Create(new MemoryStream(new byte[Window * 4])), CancellationToken.None);
        await pair.Handler.NextAsync(); // never read
        await Eventually.WaitUntilAsync(() => !stream.HasSendCredit, "the body used up its window");
        return stream;
    }

    private async Task<(Socket Caller, Socket Accepted)> ConnectAsync()
    {
        var caller = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await caller.ConnectAsync(_listener.LocalEndPoint!);
        return (caller, await _listener.AcceptAsync());
    }

    /// <summary>An exchange over a given connection, recording Kestrel's abort.</summary>
    private sealed class WatchedExchange : IHttpRequestLifetimeFeature, IConnectionSocketFeature
    {
        public WatchedExchange(Socket socket)
        {
            Socket = socket;
            Context = new DefaultHttpContext();
            Context.Features.Set<IHttpRequestLifetimeFeature>(this);
            Context.Features.Set<IConnectionSocketFeature>(this);
        }

        public HttpContext Context { get; }

        public Socket Socket { get; }

        public bool Aborted { get; private set; }

        /// <summary>Kestrel disposed the context after the sweep's look: its abort throws, as Kestrel's does.</summary>
        public bool DisposedBeforeAbort { get; init; }

        public CancellationToken RequestAborted { get; set; }

        public void Abort()
        {
            ObjectDisposedException.ThrowIf(DisposedBeforeAbort, typeof(HttpContext));
            Aborted = true;
        }
    }
}
