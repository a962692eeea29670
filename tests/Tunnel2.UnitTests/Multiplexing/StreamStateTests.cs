using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>The stream's life as one flags value: each flag set once, the stream leaving the table only when both directions ended.</summary>
public sealed class StreamStateTests
{
    private static readonly RequestHead Post = new("POST", "/x", []);

    [Fact]
    public async Task A_stream_leaves_the_table_only_once_both_directions_have_ended()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(Post, endStream: false);
        Assert.Equal(StreamState.Open, server.State);

        server.SendEnd();
        Assert.Equal(StreamState.LocalEnded, server.State);
        Assert.Equal(1, pair.Server.ActiveStreamCount);
        await Eventually.WaitUntilAsync(() => client.State == StreamState.RemoteEnded, "the client sees the request body end");

        client.SendResponseHead(new ResponseHead(204, []), endStream: true);

        Assert.Equal(StreamState.LocalEnded | StreamState.RemoteEnded | StreamState.Removed, client.State);
        Assert.Equal(0, pair.Client.ActiveStreamCount);
        await Eventually.WaitUntilAsync(() => pair.Server.ActiveStreamCount == 0, "the server's stream ends with the response");
        Assert.Equal(StreamState.LocalEnded | StreamState.RemoteEnded | StreamState.Removed, server.State);
    }

    [Fact]
    public async Task A_reset_ends_both_directions_and_removes_the_stream_after_telling_its_waiters()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(Post, endStream: false);
        Task<ResponseHead> head = server.ReadResponseHeadAsync();
        var listener = new CountingAbortListener();
        server.SetAbortListener(listener);

        client.Reset(ProtocolErrorCode.BackendUnreachable);

        await Eventually.WaitUntilAsync(() => pair.Server.ActiveStreamCount == 0, "the reset reaches the server");
        Assert.Equal(StreamState.Aborted | StreamState.LocalEnded | StreamState.RemoteEnded | StreamState.Removed, server.State);
        Assert.Equal(ProtocolErrorCode.BackendUnreachable, server.ResetCode);

        // The stream left the table last: by then every waiter had been told.
        Assert.True(head.IsFaulted);
        Assert.Equal(1, listener.Count);
        await Assert.ThrowsAsync<StreamResetException>(() => server.Input.ReadAsync().AsTask());
    }

    [Fact]
    public async Task In_a_crowd_of_1000_streams_ended_at_once_the_table_empties_only_after_every_waiter_was_told()
    {
        await using var pair = UplinkPair.Start();
        var heads = new Task<ResponseHead>[1000];
        var listeners = new CountingAbortListener[heads.Length];
        var clients = new UplinkStream[heads.Length];
        for (int i = 0; i < heads.Length; i++)
        {
            (UplinkStream server, clients[i]) = await pair.OpenAsync(Post, endStream: false);
            heads[i] = server.ReadResponseHeadAsync();
            listeners[i] = new CountingAbortListener();
            server.SetAbortListener(listeners[i]);
        }

        // Half are reset by the client, the other half end with the uplink: both paths end in the same transition.
        for (int i = 0; i < clients.Length; i += 2)
        {
            clients[i].Reset(ProtocolErrorCode.BackendUnreachable);
        }

        await Eventually.WaitUntilAsync(() => pair.Server.ActiveStreamCount == heads.Length / 2, "the resets reach the server");
        for (int i = 0; i < clients.Length; i += 2)
        {
            // Out of the table, so already told: the table is emptied last.
            Assert.True(heads[i].IsFaulted);
            Assert.Equal(1, listeners[i].Count);
        }

        pair.Server.Close("test");
        Assert.Equal(0, pair.Server.ActiveStreamCount);

        Assert.All(heads, head => Assert.True(head.IsFaulted));
        Assert.All(listeners, listener => Assert.Equal(1, listener.Count));
    }

    [Fact]
    public async Task Sending_after_the_end_is_refused_and_leaves_the_state_as_it_was()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, _) = await pair.OpenAsync(Post, endStream: false);
        server.SendEnd();

        Assert.Throws<InvalidOperationException>(server.SendEnd);
        Assert.Throws<InvalidOperationException>(() => server.SendPooledData(new byte[16], 16, endStream: false));

        Assert.Equal(StreamState.LocalEnded, server.State);
    }

    [Fact]
    public async Task Dispose_marks_the_stream_and_resets_it_when_unfinished()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(Post, endStream: false);

        client.Dispose();

        Assert.Equal(
            StreamState.Aborted | StreamState.LocalEnded | StreamState.RemoteEnded | StreamState.Removed | StreamState.Disposed,
            client.State);
        Assert.Equal(ProtocolErrorCode.Cancelled, client.ResetCode);
        await Eventually.WaitUntilAsync(() => server.IsAborted, "the server hears of the reset");
    }
}
