using System.Net;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Tcp;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// The role handles a stream's owners hold (<see cref="IHttpExchange"/>, <see cref="IByteStream"/>): the stream object
/// itself, so handing one over and calling through it costs no object, and the client gets each stream in its role.
/// </summary>
public sealed class StreamHandleTests
{
    private static readonly TcpStreamOpen Open = TcpStreamOpen.Of(new IPEndPoint(IPAddress.Parse("192.0.2.7"), 50123), new IPEndPoint(IPAddress.Loopback, 20001));

    [Fact]
    public async Task The_client_gets_a_request_as_an_exchange_and_a_tcp_open_as_a_byte_stream()
    {
        await using var pair = UplinkPair.Start();

        Assert.Equal(StreamOpenStatus.Opened, pair.Server.TryOpenStream(new RequestHead("GET", "/", []), endStream: true, out IHttpExchange? exchange));
        Assert.Equal(StreamOpenStatus.Opened, pair.Server.TryOpenTcpStream(Open, out IByteStream? bytes));
        UplinkStream first = await pair.Handler.NextAsync();
        UplinkStream second = await pair.Handler.NextAsync();

        Assert.Equal(["exchange", "byte stream"], pair.Handler.Roles);
        Assert.Equal("/", first.RequestHead!.Target);
        Assert.Equal(Open, second.Tcp);
        exchange!.Dispose();
        bytes!.Dispose();
        first.Dispose();
        second.Dispose();
    }

    [Fact]
    public async Task An_upgraded_exchange_is_the_same_object_as_its_byte_stream()
    {
        await using var pair = UplinkPair.Start();

        Assert.Equal(StreamOpenStatus.Opened, pair.Server.TryOpenStream(new RequestHead("GET", "/chat", []), endStream: false, out IHttpExchange? exchange));

        Assert.Same(exchange, exchange!.AsByteStream());
        exchange.Dispose();
    }

    [Fact]
    public async Task Calls_through_a_handle_allocate_nothing()
    {
        await using var pair = UplinkPair.Start();
        Assert.Equal(StreamOpenStatus.Opened, pair.Server.TryOpenStream(new RequestHead("GET", "/", []), endStream: false, out IHttpExchange? exchange));
        var listener = new NoListener();
        long sum = UseThroughHandles(exchange!, listener); // warm: first calls may JIT and allocate

        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 1_000; i++)
        {
            sum += UseThroughHandles(exchange!, listener);
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);
        Assert.True(sum > 0);
        exchange!.Dispose();
    }

    /// <summary>What the relays call per message: the role switch, the abort listener, credit taken and given back, the counts.</summary>
    private static long UseThroughHandles(IHttpExchange exchange, IStreamAbortListener listener)
    {
        IByteStream bytes = exchange.AsByteStream();
        bytes.SetAbortListener(listener);
        int credit = bytes.TryTakeSendCredit(1024);
        bytes.ReturnUnusedSendCredit(credit);
        bool aborted = bytes.ClearAbortListener();
        return exchange.Id + credit + bytes.SentBytes + bytes.ReceivedBytes + (aborted || exchange.IsAborted ? 0 : 1);
    }

    private sealed class NoListener : IStreamAbortListener
    {
        public void OnStreamAborted()
        {
        }
    }
}
