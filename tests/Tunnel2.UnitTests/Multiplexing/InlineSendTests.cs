using System.Buffers;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// The writer sends the last frame of a step on the thread that queued it when it is idle, and a response head that
/// announces a small body waits for that body's first frame; neither may leave a frame unsent.
/// </summary>
public sealed class InlineSendTests
{
    private static readonly RequestHead Get = new("GET", "/", []);

    [Fact]
    public async Task A_head_announcing_a_small_body_goes_out_when_the_body_has_to_wait_for_its_source()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(Get, endStream: true);
        client.SendResponseHead(new ResponseHead(200, [new HeaderField("Content-Length", "5")]), endStream: false);
        var source = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        Task<int> sending = client.SendFrameAsync(
            static async (destination, state, _) =>
            {
                await state.Task;
                "hello"u8.CopyTo(destination.Span);
                return 5;
            },
            static (_, _) => ValueTask.CompletedTask,
            source,
            limit: 5,
            endAtLimit: true,
            CancellationToken.None).AsTask();

        // The body's source has nothing yet: the head must not wait for it.
        Assert.Equal(200, (await server.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        Assert.False(sending.IsCompleted);

        source.SetResult();
        Assert.Equal(5, await sending.WithTimeout());
        Assert.Equal("hello"u8.ToArray(), await server.ReadAllAsync().WithTimeout());
    }

    [Fact]
    public async Task A_head_announcing_a_small_body_goes_out_with_a_reset_when_no_body_follows()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(Get, endStream: true);
        client.SendResponseHead(new ResponseHead(200, [new HeaderField("Content-Length", "5")]), endStream: false);
        client.Reset(Tunnel2.Protocol.Frames.ProtocolErrorCode.BackendAborted);

        Assert.Equal(200, (await server.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        var error = await Assert.ThrowsAsync<StreamResetException>(() => server.ReadAllAsync().WithTimeout());
        Assert.Equal(Tunnel2.Protocol.Frames.ProtocolErrorCode.BackendAborted, error.ErrorCode);
    }

    [Fact]
    public async Task Many_small_exchanges_from_many_threads_each_get_their_own_answer()
    {
        // The client answers on its reader loop: a head announcing the body (which waits for it), then the body, its target.
        var handler = new RecordingStreamHandler
        {
            OnOpened = stream =>
            {
                byte[] body = System.Text.Encoding.ASCII.GetBytes(stream.RequestHead!.Target);
                stream.SendResponseHead(new ResponseHead(200, [new HeaderField("Content-Length", body.Length.ToString(System.Globalization.CultureInfo.InvariantCulture))]), endStream: false);
                Task sent = stream.SendAsync(new ReadOnlySequence<byte>(body), endStream: true, CancellationToken.None).AsTask();
                Assert.True(sent.IsCompletedSuccessfully); // credit in hand: the whole small answer is queued at once
                stream.Dispose();
            },
        };
        await using var pair = UplinkPair.Start(handler: handler);
        Task[] callers = new Task[8];
        for (int t = 0; t < callers.Length; t++)
        {
            callers[t] = Task.Run(async () =>
            {
                for (int i = 0; i < 200; i++)
                {
                    Assert.Equal(StreamOpenStatus.Opened, pair.Server.TryOpenStream(new RequestHead("GET", $"/{t}/{i}", []), endStream: true, out UplinkStream? stream));
                    using (stream)
                    {
                        Assert.Equal(200, (await stream!.ReadResponseHeadAsync().WithTimeout()).StatusCode);
                        Assert.Equal(System.Text.Encoding.ASCII.GetBytes($"/{t}/{i}"), await stream.ReadAllAsync().WithTimeout());
                    }
                }
            });
        }

        await Task.WhenAll(callers).WithTimeout();
    }
}
