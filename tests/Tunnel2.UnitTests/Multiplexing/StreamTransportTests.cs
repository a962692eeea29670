using System.IO.Pipelines;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>Uplinks over <see cref="Tunnel2.Protocol.Multiplexing.DuplexPipe.Over(Stream, bool)"/>, the stream adapter the hosts use for real connections.</summary>
public sealed class StreamTransportTests
{
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)] // as TunnelServer runs: zero-byte reads on the server's side
    [InlineData(true, true)]
    public async Task An_exchange_crosses_two_stream_transports_intact(bool serverZeroByteReads, bool clientZeroByteReads)
    {
        (PipeStream serverSide, PipeStream clientSide) = PipeStream.CreatePair();
        var handler = new RecordingStreamHandler();
        var server = new Uplink(DuplexPipe.Over(serverSide, serverZeroByteReads), new UplinkSettings(), UplinkRole.Server, NullLogger.Instance);
        var client = new Uplink(DuplexPipe.Over(clientSide, clientZeroByteReads), new UplinkSettings(), UplinkRole.Client, NullLogger.Instance, handler);
        Task serverRun = server.RunAsync();
        Task clientRun = client.RunAsync();
        byte[] requestBody = StreamExchangeTests.Pattern(700_000, seed: 21);
        byte[] responseBody = StreamExchangeTests.Pattern(900_000, seed: 22);

        UplinkStream request = server.OpenStreamOrFail(new RequestHead("POST", "/echo", [new("X-A", "1")]), endStream: false);
        Task send = request.SendBodyAsync(PipeReader.Create(new MemoryStream(requestBody)), CancellationToken.None);
        UplinkStream answer = await handler.NextAsync();
        Assert.Equal(requestBody, await answer.ReadAllAsync());
        answer.SendResponseHead(new ResponseHead(200, [new("X-B", "2")]), endStream: false);
        Task respond = answer.SendBodyAsync(PipeReader.Create(new MemoryStream(responseBody)), CancellationToken.None); // larger than the window

        Assert.Equal([new HeaderField("X-B", "2")], (await request.ReadResponseHeadAsync().WithTimeout()).Headers);
        Assert.Equal(responseBody, await request.ReadAllAsync());
        await Task.WhenAll(send, respond).WithTimeout();

        server.Close("done");
        client.Close("done");
        await Task.WhenAll(serverRun, clientRun).WithTimeout();
    }

    [Fact]
    public async Task A_protocol_error_still_puts_GoAway_on_the_stream_before_closing()
    {
        (PipeStream uplinkSide, PipeStream peerSide) = PipeStream.CreatePair();
        var uplink = new Uplink(DuplexPipe.Over(uplinkSide), new UplinkSettings(), UplinkRole.Server, NullLogger.Instance);
        Task run = uplink.RunAsync();

        await peerSide.WriteAsync(FrameBytes.Header(4, 0xEE, 0, 1));
        await run.WithTimeout();

        Assert.StartsWith("protocol error", uplink.CloseReason, StringComparison.Ordinal);
        Assert.Equal(
            FrameBytes.Hex(FrameBytes.Frame(FrameType.GoAway, 0, FrameBytes.GoAway(0, ProtocolErrorCode.ProtocolError))),
            FrameBytes.Hex(uplinkSide.Written));
    }
}
