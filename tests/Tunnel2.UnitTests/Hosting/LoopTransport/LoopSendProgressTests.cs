using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Loops;

namespace Tunnel2.UnitTests.Hosting.LoopTransport;

/// <summary>
/// The loop transport's send progress (<see cref="ISendProgress"/>): what Kestrel flushed counts as sent only once the
/// caller's socket took it, which is when ProxyEntry gives a tunnel body's credit back.
/// </summary>
public sealed class LoopSendProgressTests
{
    private const int ResponseBytes = 16 * 1024 * 1024;

    [Fact]
    public async Task A_wait_for_flushed_bytes_is_answered_once_the_caller_has_taken_them_and_not_before()
    {
        await using LoopTransportHarness harness = await LoopTransportHarness.StartAsync(maxWriteBuffer: 2 * ResponseBytes);
        (Socket client, ConnectionContext server) = await harness.ConnectAsync(receiveBuffer: 4096);
        using Socket caller = client;
        ISendProgress? progress = server.Features.Get<ISendProgress>();
        Assert.NotNull(progress);

        // Below the output limit the flush completes at once, with nothing read by the caller yet.
        ValueTask<System.IO.Pipelines.FlushResult> flush = server.Transport.Output.WriteAsync(new byte[ResponseBytes]);
        Assert.True(flush.IsCompletedSuccessfully);
        await flush;
        Assert.Equal(ResponseBytes, progress.Flushed);
        var listener = new SentListener();
        Assert.True(progress.NotifyWhenSent(progress.Flushed, listener), "16 MiB cannot all be in the kernel's buffers");

        // A first MiB read: most of the response is still in the server.
        byte[] buffer = new byte[64 * 1024];
        long read = 0;
        while (read < 1024 * 1024)
        {
            read += await caller.ReceiveAsync(buffer).WaitAsync(LoopHarness.Timeout);
        }

        Assert.False(listener.Told.IsCompleted);
        while (read < ResponseBytes)
        {
            read += await caller.ReceiveAsync(buffer).WaitAsync(LoopHarness.Timeout);
        }

        Assert.Equal(ResponseBytes, await listener.Told.WaitAsync(LoopHarness.Timeout));
        Assert.Same(progress, listener.Source);
        Assert.False(progress.NotifyWhenSent(progress.Flushed, listener), "everything flushed has been sent");
        await server.Transport.Output.CompleteAsync();
        await server.DisposeAsync();
        Assert.Equal(0, harness.FaultCount);
    }

    private sealed class SentListener : ISendProgressListener
    {
        private readonly TaskCompletionSource<long> _told = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task<long> Told => _told.Task;

        public ISendProgress? Source { get; private set; }

        public void OnSent(ISendProgress source, long sent)
        {
            Source = source;
            _told.SetResult(sent);
        }
    }
}
