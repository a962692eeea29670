using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

public sealed class UplinkCloseTests
{
    [Fact]
    public async Task Closing_an_uplink_fails_its_open_streams_with_UplinkClosedException()
    {
        await using var pair = UplinkPair.Start(new UplinkSettings { InitialStreamWindow = 1024 });
        UplinkStream waitingForHead = pair.Server.OpenStreamOrFail(new RequestHead("GET", "/a", []), endStream: true);
        UplinkStream waitingForCredit = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/b", []), endStream: false);
        await waitingForCredit.AcquireSendCreditAsync(1024, CancellationToken.None);
        Task<int> credit = waitingForCredit.AcquireSendCreditAsync(1, CancellationToken.None).AsTask();

        pair.Server.Close("closed by the test");

        await Assert.ThrowsAsync<UplinkClosedException>(() => waitingForHead.ReadResponseHeadAsync().WithTimeout());
        await Assert.ThrowsAsync<UplinkClosedException>(async () => await waitingForHead.Input.ReadAsync());
        await Assert.ThrowsAsync<UplinkClosedException>(() => credit.WithTimeout());
        Assert.True(waitingForHead.Aborted.IsCancellationRequested);
        Assert.False(pair.Server.IsOpen);
        Assert.Equal("closed by the test", pair.Server.CloseReason);
        Assert.True(pair.Server.Closed.IsCancellationRequested);
        await pair.ServerRun.WithTimeout();
    }

    [Fact]
    public async Task The_peer_of_a_closed_uplink_closes_and_fails_its_streams_too()
    {
        await using var pair = UplinkPair.Start();
        (_, UplinkStream client) = await pair.OpenAsync(new RequestHead("POST", "/x", []), endStream: false);

        pair.Server.Close("server going away");

        await pair.ClientRun.WithTimeout();
        Assert.False(pair.Client.IsOpen);
        Assert.Equal("peer closed the connection", pair.Client.CloseReason);
        await Assert.ThrowsAsync<UplinkClosedException>(async () => await client.Input.ReadAsync());
        Assert.Throws<StreamResetException>(() => client.SendResponseHead(new ResponseHead(200, []), endStream: true));
    }

    [Fact]
    public async Task A_closed_uplink_opens_no_more_streams()
    {
        await using var pair = UplinkPair.Start();

        pair.Server.Close("done");

        Assert.Equal(StreamOpenStatus.UplinkClosed, pair.Server.TryOpenStream(new RequestHead("GET", "/", []), endStream: true, out UplinkStream? refused));
        Assert.Null(refused);
        Assert.Equal("done", pair.Server.CloseReason);
        Assert.False(pair.Server.AcceptsNewStreams);
    }

    [Fact]
    public async Task The_first_close_reason_wins()
    {
        await using var pair = UplinkPair.Start();

        pair.Server.Close("first");
        pair.Server.Close("second");

        Assert.Equal("first", pair.Server.CloseReason);
        await pair.ServerRun.WithTimeout();
    }

    [Fact]
    public async Task Cancelling_RunAsync_closes_the_uplink_as_stopped_locally()
    {
        var toClient = new System.IO.Pipelines.Pipe();
        var toServer = new System.IO.Pipelines.Pipe();
        var server = new Uplink(new DuplexPipe(toServer.Reader, toClient.Writer), new UplinkSettings(), UplinkRole.Server, Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance);
        using var stop = new CancellationTokenSource();
        Task run = server.RunAsync(stop.Token);

        await stop.CancelAsync();

        await run.WithTimeout();
        Assert.Equal("stopped locally", server.CloseReason);
    }

    [Fact]
    public async Task Closing_one_uplink_leaves_another_alone()
    {
        await using var first = UplinkPair.Start();
        await using var second = UplinkPair.Start();
        (UplinkStream survivor, UplinkStream survivorClient) = await second.OpenAsync(new RequestHead("GET", "/", []), endStream: true);

        first.Server.Close("only this one");
        survivorClient.SendResponseHead(new ResponseHead(200, []), endStream: true);

        Assert.Equal(200, (await survivor.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        Assert.True(second.Server.IsOpen);
        Assert.True(second.Client.IsOpen);
    }
}
