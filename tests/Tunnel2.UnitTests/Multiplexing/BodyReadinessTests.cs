using System.Buffers;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// <see cref="UplinkStream.WaitForBodyOrFullWindowAsync"/>: the relay's signal that a request is ready for a backend
/// slot — the whole body, or the stream's initial window of it — without consuming anything.
/// </summary>
public sealed class BodyReadinessTests
{
    private const int Window = 16 * 1024;
    private static readonly UplinkSettings Settings = new() { InitialStreamWindow = Window, MaxFramePayload = Window };

    [Fact]
    public async Task A_body_short_of_the_window_and_not_ended_is_not_ready_and_becomes_ready_when_it_ends()
    {
        await using var pair = UplinkPair.Start(Settings);
        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/x", []), endStream: false);
        Send(server, 100, endStream: false);
        UplinkStream client = await pair.Handler.NextAsync();

        Task ready = client.WaitForBodyOrFullWindowAsync(CancellationToken.None).AsTask();
        await pair.BarrierAsync();
        Assert.False(ready.IsCompleted);

        Send(server, 50, endStream: true);
        await ready.WithTimeout();
        Assert.Equal(150, (await client.ReadAllAsync()).Length); // nothing was consumed by the wait
    }

    [Fact]
    public async Task A_body_that_fills_the_window_is_ready_before_it_ends_and_the_reader_gets_every_byte()
    {
        await using var pair = UplinkPair.Start(Settings);
        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/x", []), endStream: false);
        Send(server, Window / 2, endStream: false);
        UplinkStream client = await pair.Handler.NextAsync();
        Task ready = client.WaitForBodyOrFullWindowAsync(CancellationToken.None).AsTask();
        await pair.BarrierAsync();
        Assert.False(ready.IsCompleted);

        Send(server, Window / 2, endStream: false);
        await ready.WithTimeout();

        // The stream's reader sees the buffered bytes at once, not only once more arrive.
        System.IO.Pipelines.ReadResult read = await client.Input.ReadAsync().AsTask().WithTimeout();
        Assert.Equal(Window, read.Buffer.Length);
        client.Input.AdvanceTo(read.Buffer.End);
    }

    [Fact]
    public async Task A_reset_while_waiting_ends_the_wait_with_the_reset()
    {
        await using var pair = UplinkPair.Start(Settings);
        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/x", []), endStream: false);
        Send(server, 10, endStream: false);
        UplinkStream client = await pair.Handler.NextAsync();
        Task ready = client.WaitForBodyOrFullWindowAsync(CancellationToken.None).AsTask();

        server.Reset(Tunnel2.Protocol.Frames.ProtocolErrorCode.Cancelled);
        await Assert.ThrowsAsync<StreamResetException>(() => ready.WithTimeout());
    }

    private static void Send(UplinkStream stream, int length, bool endStream)
    {
        byte[] pooled = ArrayPool<byte>.Shared.Rent(length);
        pooled.AsSpan(0, length).Fill((byte)'b');
        stream.SendPooledData(pooled, length, endStream);
    }
}
