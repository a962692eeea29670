using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// Finished stream objects serve later exchanges (<see cref="UplinkStreamPool"/>), but only once everyone who might still
/// touch them is done: the table, the owner, the writer's lane and every body loop.
/// </summary>
public sealed class StreamPoolTests
{
    private static readonly RequestHead Get = new("GET", "/x", []);

    [Fact]
    public async Task A_finished_stream_serves_the_next_exchange_with_nothing_left_of_the_last()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream first, UplinkStream firstClient) = await pair.OpenAsync(Get, endStream: true);
        firstClient.SendResponseHead(new ResponseHead(200, []), endStream: false);
        await firstClient.SendAsync(new ReadOnlySequence<byte>("first"u8.ToArray()), endStream: true, CancellationToken.None);
        firstClient.Dispose();
        Assert.Equal(200, (await first.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        Assert.Equal("first", Encoding.ASCII.GetString(await first.ReadAllAsync()));
        uint firstId = first.Id;
        first.Dispose();

        // The pool clears finished streams on the reader loop between batches: one more exchange passes through it.
        await pair.BarrierAsync();
        await Eventually.WaitUntilAsync(() => pair.Server.StreamPool.FreeCount == 1, "the server's finished stream is free");
        await Eventually.WaitUntilAsync(() => pair.Client.StreamPool.FreeCount == 1, "the client's finished stream is free");

        (UplinkStream second, UplinkStream secondClient) = await pair.OpenAsync(Get, endStream: true);
        Assert.Same(first, second);
        Assert.True(second.Id > firstId);
        Assert.Equal(StreamState.LocalEnded, second.State);
        Assert.Null(second.ResetCode);
        Assert.Equal(0, second.ReceivedBytes);
        Assert.Equal(2, second.Holds); // the table's and the owner's
        Assert.Same(firstClient, secondClient);
        Assert.Equal(second.Id, secondClient.Id);
        Assert.Equal(StreamState.RemoteEnded, secondClient.State);

        secondClient.SendResponseHead(new ResponseHead(201, []), endStream: false);
        await secondClient.SendAsync(new ReadOnlySequence<byte>("second"u8.ToArray()), endStream: true, CancellationToken.None);
        Assert.Equal(201, (await second.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        Assert.Equal("second", Encoding.ASCII.GetString(await second.ReadAllAsync()));
        second.Dispose();
        secondClient.Dispose();
    }

    [Fact]
    public async Task A_body_loop_its_owner_left_running_keeps_the_stream_until_the_loop_ends()
    {
        await using var pair = UplinkPair.Start();
        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/upload", []), endStream: false);
        var source = new Pipe();
        Task upload = server.SendBodyAsync(source.Reader, CancellationToken.None);
        UplinkStream client = await pair.Handler.NextAsync();

        // An answer before the upload ends; the owner leaves without waiting for its upload loop (which waits on its source).
        client.SendResponseHead(new ResponseHead(413, []), endStream: true);
        await server.ReadResponseHeadAsync().WithTimeout();
        server.Dispose();
        client.Dispose();
        Assert.Equal(1, server.Holds);
        await pair.BarrierAsync();
        Assert.Equal(0, pair.Server.StreamPool.FreeCount);
        UplinkStream next = pair.Server.OpenStreamOrFail(Get, endStream: true);
        Assert.NotSame(server, next);
        UplinkStream nextClient = await pair.Handler.NextAsync();

        // The source yields: the loop finds its stream reset, ends, and only then lets the stream go.
        await source.Writer.WriteAsync("late"u8.ToArray());
        await Assert.ThrowsAsync<StreamResetException>(() => upload.WaitAsync(TestTimeouts.Default));
        Assert.Equal(0, server.Holds);
        await pair.BarrierAsync();
        await Eventually.WaitUntilAsync(() => pair.Server.StreamPool.FreeCount == 1, "the stream is free once its loop ended");
        Assert.Equal(0, nextClient.ReceivedBytes); // the late bytes went nowhere
    }

    [Fact]
    public async Task A_body_loop_woken_by_the_end_of_the_body_just_as_its_owner_lets_go_ends_cleanly_and_the_stream_reads_its_next_body()
    {
        await using var pair = UplinkPair.Start();
        var post = new RequestHead("POST", "/upload", []);
        var used = new HashSet<UplinkStream>(ReferenceEqualityComparer.Instance);
        for (int i = 0; i < 20; i++)
        {
            (UplinkStream server, UplinkStream client) = await pair.OpenAsync(post, endStream: false);
            used.Add(client);
            var destination = new Pipe();
            Task copy = client.CopyInputToAsync(destination.Writer, chunked: false, CancellationToken.None);
            client.SendResponseHead(new ResponseHead(200, []), endStream: true);

            // The peer's END_STREAM (delivered here as the reader does) wakes the loop's read on the thread pool; the
            // owner lets go before that read resumes, as a relay does whose answer ended first. The read must neither
            // fail nor leave the inbound pipe reading, which its reset for the next exchange would not clear.
            client.EndInbound();
            client.Dispose();
            await copy.WaitAsync(TestTimeouts.Default);
            await server.ReadResponseHeadAsync().WithTimeout();
            server.Dispose();
        }

        // The finished streams serve the next exchanges (the pool clears them on the reader loop between batches).
        await pair.BarrierAsync();
        int reused = 0;
        for (int i = 0; i < 20; i++)
        {
            (UplinkStream server, UplinkStream client) = await pair.OpenAsync(post, endStream: false);
            reused += used.Contains(client) ? 1 : 0;
            await server.SendAsync(new ReadOnlySequence<byte>("body"u8.ToArray()), endStream: true, CancellationToken.None);
            await client.WaitForBodyOrFullWindowAsync(CancellationToken.None).AsTask().WaitAsync(TestTimeouts.Default);
            Assert.Equal("body", Encoding.ASCII.GetString(await client.ReadAllAsync()));
            client.SendResponseHead(new ResponseHead(204, []), endStream: true);
            await server.ReadResponseHeadAsync().WithTimeout();
            server.Dispose();
            client.Dispose();
        }

        Assert.True(reused > 0, "no exchange ran on a stream of the first ones");
    }

    [Fact]
    public async Task A_stream_with_frames_in_the_writers_lane_is_held_until_the_writer_has_taken_them()
    {
        await using var peer = RawPeer.ForServer();

        // A filler stream with credit to spare stalls the writer: nobody reads what it writes beyond the pipe's 64 KiB.
        UplinkStream filler = peer.Uplink.OpenStreamOrFail(Get, endStream: false);
        await peer.SendFrameAsync(FrameType.WindowUpdate, filler.Id, FrameBytes.U32(1 << 20));
        await Eventually.WaitUntilAsync(() => filler.HasSendCredit && filler.SentBytes == 0, "the filler has its credit");
        await filler.SendAsync(new ReadOnlySequence<byte>(new byte[256 * 1024]), endStream: false, CancellationToken.None);
        await Eventually.WaitUntilAsync(() => filler.SentBytes > 0, "the writer is busy with the filler");

        UplinkStream stream = peer.Uplink.OpenStreamOrFail(new RequestHead("POST", "/x", []), endStream: false);
        await stream.SendAsync(new ReadOnlySequence<byte>(new byte[1024]), endStream: false, CancellationToken.None);
        stream.Dispose();
        Assert.Equal(StreamState.Aborted | StreamState.LocalEnded | StreamState.RemoteEnded | StreamState.Removed | StreamState.Disposed, stream.State);
        Assert.Equal(1, stream.Holds); // the lane's: the writer has not come round to it

        // Reading lets the writer on; once it reaches the stream's place in the lane, it finds the queue the reset
        // dropped, and lets the stream go.
        (ReceivedFrame reset, _) = await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Reset && f.Header.StreamId == stream.Id);
        Assert.NotNull(reset);
        // Taking the stream out of its lane writes nothing, so the frames left are read in the background meanwhile.
        Task reading = ReadEveryFrameAsync(peer);
        await Eventually.WaitUntilAsync(() => stream.Holds == 0, "the writer comes round to the stream's place in its lane");
        await peer.SendFrameAsync(FrameType.Ping, 0, FrameBytes.U64(1)); // a batch for the reader, which clears finished streams
        await Eventually.WaitUntilAsync(() => peer.Uplink.StreamPool.FreeCount == 1, "the stream is free");
        filler.Dispose();
        Assert.False(reading.IsFaulted);
    }

    /// <summary>Reads what the uplink writes until it stops writing (or nothing comes for the default timeout).</summary>
    private static async Task ReadEveryFrameAsync(RawPeer peer)
    {
        try
        {
            while (await peer.ReadFrameAsync() is not null)
            {
            }
        }
        catch (OperationCanceledException)
        {
            // Nothing more came.
        }
    }

    [Fact]
    public async Task In_a_crowd_of_1000_exchanges_with_resets_and_callers_leaving_each_caller_gets_only_its_own_answer()
    {
        var handler = new RecordingStreamHandler
        {
            OnOpened = client => _ = Task.Run(async () =>
            {
                string target = client.RequestHead!.Target;
                int n = int.Parse(target.AsSpan(1));
                try
                {
                    if (n % 11 == 0)
                    {
                        client.Reset(ProtocolErrorCode.BackendUnreachable);
                        return;
                    }

                    client.SendResponseHead(new ResponseHead(200, []), endStream: false);
                    await client.SendAsync(new ReadOnlySequence<byte>(Encoding.ASCII.GetBytes(target)), endStream: true, CancellationToken.None);
                }
                catch (StreamResetException)
                {
                    // The caller left first.
                }
                finally
                {
                    client.Dispose();
                }
            }),
        };
        await using var pair = UplinkPair.Start(handler: handler);
        var objects = new HashSet<UplinkStream>(ReferenceEqualityComparer.Instance);
        int answered = 0;
        int reset = 0;

        async Task CallerAsync(int first)
        {
            for (int n = first; n < first + 10; n++)
            {
                using UplinkStream stream = pair.Server.OpenStreamOrFail(new RequestHead("GET", $"/{n}", []), endStream: true);
                lock (objects)
                {
                    objects.Add(stream);
                }

                if (n % 7 == 0)
                {
                    continue; // the caller leaves before the answer
                }

                try
                {
                    Assert.Equal(200, (await stream.ReadResponseHeadAsync().WithTimeout()).StatusCode);
                    Assert.Equal($"/{n}", Encoding.ASCII.GetString(await stream.ReadAllAsync()));
                    Interlocked.Increment(ref answered);
                }
                catch (StreamResetException ex) when (n % 11 == 0)
                {
                    Assert.Equal(ProtocolErrorCode.BackendUnreachable, ex.ErrorCode);
                    Interlocked.Increment(ref reset);
                }
            }
        }

        var callers = new Task[100];
        for (int i = 0; i < callers.Length; i++)
        {
            int first = i * 10;
            callers[i] = Task.Run(() => CallerAsync(first));
        }

        await Task.WhenAll(callers).WaitAsync(TimeSpan.FromSeconds(60));
        int expectedReset = 0;
        int expectedAnswered = 0;
        for (int n = 0; n < 1000; n++)
        {
            if (n % 7 != 0)
            {
                _ = n % 11 == 0 ? expectedReset++ : expectedAnswered++;
            }
        }

        Assert.Equal(expectedAnswered, answered);
        Assert.Equal(expectedReset, reset);
        Assert.True(objects.Count < 1000, $"finished streams were reused: {objects.Count} objects for 1,000 exchanges");
        await Eventually.WaitUntilAsync(() => pair.Server.ActiveStreamCount == 0 && pair.Client.ActiveStreamCount == 0, "every stream ends");
    }
}
