using System.Buffers;
using System.Net.Sockets;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Tcp.LoopRelay;

/// <summary>
/// Flow control through the loop relay: a target that stops reading stops the caller's side at the stream's window
/// plus what the kernel buffers (the relay's backlog holds only what the kernel refused), and nothing is lost once it
/// reads again; a caller whose side stops taking the target's bytes pauses the target's reads the same way.
/// </summary>
[Collection(SerialCollection.Name)]
public sealed class LoopTargetBackpressureTests
{
    private const int Total = 64 << 20;

    [Fact]
    public async Task A_target_that_stops_reading_stops_the_caller_at_a_bound_and_then_gets_every_byte()
    {
        await using var harness = LoopRelayHarness.Start();
        UplinkStream stream = harness.OpenStream();
        using Socket target = await harness.AcceptAsync();
        byte[] payload = LoopTargetRelayTests.Payload(Total, seed: 7);

        Task send = stream.SendAsync(new ReadOnlySequence<byte>(payload), endStream: true, CancellationToken.None).AsTask();
        long stalledAt = await StalledAsync(() => stream.SentBytes);

        Assert.False(send.IsCompleted);
        Assert.InRange(stalledAt, 1, 16 << 20);
        byte[] all = await LoopTargetRelayTests.ReadToEndAsync(target);
        await send.WithTimeout();
        Assert.True(payload.AsSpan().SequenceEqual(all));
        target.Shutdown(SocketShutdown.Send);
        Assert.Empty(await stream.ReadAllAsync());
        stream.Dispose();
    }

    [Fact]
    public async Task A_caller_that_stops_reading_pauses_the_targets_reads_and_then_gets_every_byte()
    {
        await using var harness = LoopRelayHarness.Start();
        UplinkStream stream = harness.OpenStream();
        using Socket target = await harness.AcceptAsync();
        byte[] payload = LoopTargetRelayTests.Payload(Total, seed: 8);

        // Nobody reads the server side's stream: the client's stream runs out of credit and the loop stops reading.
        Task send = SendAllAsync(target, payload);
        long stalledAt = await StalledAsync(() => stream.ReceivedBytes);

        Assert.False(send.IsCompleted);
        Assert.InRange(stalledAt, 1, 16 << 20);
        Task<byte[]> read = stream.ReadAllAsync();
        await send.WaitAsync(TimeSpan.FromSeconds(60));
        target.Shutdown(SocketShutdown.Send);
        byte[] all = await read.WaitAsync(TimeSpan.FromSeconds(60));
        Assert.True(payload.AsSpan().SequenceEqual(all));
        await stream.SendAsync(ReadOnlySequence<byte>.Empty, endStream: true, CancellationToken.None);
        stream.Dispose();
    }

    private static async Task SendAllAsync(Socket socket, byte[] payload)
    {
        for (int offset = 0; offset < payload.Length; offset += 1 << 20)
        {
            await socket.SendAsync(payload.AsMemory(offset, Math.Min(1 << 20, payload.Length - offset)));
        }
    }

    /// <summary>Probes a growing count until it has stayed put for several probes (flow control holding it), with a deadline.</summary>
    internal static async Task<long> StalledAsync(Func<long> count)
    {
        DateTime deadline = DateTime.UtcNow + TimeSpan.FromSeconds(60);
        long last = -1;
        int still = 0;
        while (DateTime.UtcNow < deadline)
        {
            long now = count();
            still = now == last && now > 0 ? still + 1 : 0;
            if (still == 5)
            {
                return now;
            }

            last = now;
            await Task.Delay(100);
        }

        throw new TimeoutException($"The count kept moving (last {last}).");
    }
}
