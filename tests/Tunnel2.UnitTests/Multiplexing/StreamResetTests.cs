using System.IO.Pipelines;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>Reset crosses the uplink in both directions and fails the other side with the code it carried.</summary>
public sealed class StreamResetTests
{
    [Theory]
    [InlineData(ProtocolErrorCode.BackendUnreachable)]
    [InlineData(ProtocolErrorCode.Overloaded)]
    [InlineData(ProtocolErrorCode.Draining)]
    public async Task A_client_reset_fails_the_servers_response_head_and_input_with_its_code(ProtocolErrorCode code)
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("POST", "/x", []), endStream: false);

        client.Reset(code);

        var headError = await Assert.ThrowsAsync<StreamResetException>(() => server.ReadResponseHeadAsync().WithTimeout());
        Assert.Equal(code, headError.ErrorCode);
        var inputError = await Assert.ThrowsAsync<StreamResetException>(async () => await server.Input.ReadAsync());
        Assert.Equal(code, inputError.ErrorCode);
        Assert.Equal(code, server.ResetCode);
        Assert.True(server.Aborted.IsCancellationRequested);
        Assert.Equal(code, client.ResetCode);
    }

    [Fact]
    public async Task A_server_reset_fails_the_clients_input_and_aborts_it()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("POST", "/x", []), endStream: false);
        CancellationToken aborted = client.Aborted;

        server.Reset(ProtocolErrorCode.ResponseHeadTimeout);

        var error = await Assert.ThrowsAsync<StreamResetException>(async () => await client.Input.ReadAsync().AsTask().WithTimeout());
        Assert.Equal(ProtocolErrorCode.ResponseHeadTimeout, error.ErrorCode);
        await Eventually.WaitUntilAsync(() => aborted.IsCancellationRequested, "the client's Aborted token fires");
        var sendError = Assert.Throws<StreamResetException>(() => client.SendResponseHead(new ResponseHead(200, []), endStream: true));
        Assert.Equal(ProtocolErrorCode.ResponseHeadTimeout, sendError.ErrorCode);
    }

    [Fact]
    public async Task A_reset_in_the_middle_of_a_response_body_fails_the_servers_input_with_its_code()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/", []), endStream: true);

        client.SendResponseHead(new ResponseHead(200, []), endStream: false);
        await client.AcquireSendCreditAsync(5, CancellationToken.None);
        byte[] pooled = System.Buffers.ArrayPool<byte>.Shared.Rent(5);
        "part!"u8.CopyTo(pooled);
        client.SendPooledData(pooled, 5, endStream: false);
        client.Reset(ProtocolErrorCode.BackendAborted);

        Assert.Equal(200, (await server.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        using var received = new MemoryStream();
        var error = await Assert.ThrowsAsync<StreamResetException>(() => server.CopyInputToAsync(PipeWriter.Create(received), chunked: false, CancellationToken.None).WithTimeout());
        Assert.Equal(ProtocolErrorCode.BackendAborted, error.ErrorCode);
        // Bytes still buffered when the reset lands are dropped with it: only a prefix of what was sent may have been read.
        Assert.True("part!"u8.StartsWith(received.ToArray()));
    }

    [Fact]
    public async Task A_local_reset_fails_the_local_side_too()
    {
        await using var pair = UplinkPair.Start();
        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/x", []), endStream: false);

        server.Reset(ProtocolErrorCode.Cancelled);

        var error = await Assert.ThrowsAsync<StreamResetException>(() => server.ReadResponseHeadAsync().WithTimeout());
        Assert.Equal(ProtocolErrorCode.Cancelled, error.ErrorCode);
        await Assert.ThrowsAsync<StreamResetException>(async () => await server.AcquireSendCreditAsync(1, CancellationToken.None));
        Assert.Equal(0, pair.Server.ActiveStreamCount);
    }

    [Fact]
    public async Task Disposing_an_unfinished_stream_resets_it_as_cancelled_on_the_peer()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/", []), endStream: true);

        client.Dispose();

        var error = await Assert.ThrowsAsync<StreamResetException>(() => server.ReadResponseHeadAsync().WithTimeout());
        Assert.Equal(ProtocolErrorCode.Cancelled, error.ErrorCode);
        Assert.True(pair.Server.IsOpen);
        Assert.True(pair.Client.IsOpen);
    }

    [Fact]
    public async Task Disposing_a_finished_stream_sends_no_reset()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/", []), endStream: true);
        client.SendResponseHead(new ResponseHead(200, []), endStream: true);
        await server.ReadResponseHeadAsync().WithTimeout();
        Assert.Empty(await server.ReadAllAsync());

        client.Dispose();
        server.Dispose();

        Assert.Null(server.ResetCode);
        Assert.Null(client.ResetCode);
    }

    [Fact]
    public async Task Resetting_one_stream_leaves_the_others_alone()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream firstServer, UplinkStream firstClient) = await pair.OpenAsync(new RequestHead("GET", "/1", []), endStream: true);
        (UplinkStream secondServer, UplinkStream secondClient) = await pair.OpenAsync(new RequestHead("GET", "/2", []), endStream: true);

        firstClient.Reset(ProtocolErrorCode.InternalError);
        secondClient.SendResponseHead(new ResponseHead(200, []), endStream: true);

        await Assert.ThrowsAsync<StreamResetException>(() => firstServer.ReadResponseHeadAsync().WithTimeout());
        Assert.Equal(200, (await secondServer.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        Assert.Null(secondServer.ResetCode);
    }
}
