using Tunnel2.Loops.Sockets;

namespace Tunnel2.UnitTests.Loops;

public sealed class LoopSocketAllocationTests
{
    [Fact]
    public async Task An_echo_round_trip_allocates_nothing_on_the_loop_thread()
    {
        using var harness = new LoopHarness();
        EchoServer server = await EchoServer.StartAsync(harness);
        var ping = new PingClient(warmup: 2_000, measured: 20_000);

        await harness.OnLoopAsync(() => LoopSocket.Connect(harness.Loop, new(System.Net.IPAddress.Loopback, server.Port), ping, out _));
        long allocated = await ping.Done.Task.WaitAsync(LoopHarness.Timeout);

        // Both ends and the loop itself, over 20,000 round trips (four socket events each): no per-message allocation.
        Assert.True(allocated < 1_024, $"{allocated} bytes allocated on the loop thread over 20,000 round trips");
    }

    /// <summary>Sends 64 bytes, waits for them to come back, again; measures the loop thread's allocations in between.</summary>
    private sealed class PingClient(int warmup, int measured) : ILoopSocketHandler
    {
        private readonly byte[] _message = new byte[64];
        private int _received, _roundTrips;
        private long _before;

        public TaskCompletionSource<long> Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void OnConnected(LoopSocket socket) => socket.Send(_message);

        public void OnReadable(LoopSocket socket)
        {
            while (socket.Receive(out _) is { Status: ReceiveStatus.Data } read)
            {
                _received += read.Bytes;
                if (_received < _message.Length)
                {
                    continue;
                }
                _received = 0;
                if (++_roundTrips == warmup)
                {
                    _before = GC.GetAllocatedBytesForCurrentThread();
                }
                if (_roundTrips == warmup + measured)
                {
                    Done.SetResult(GC.GetAllocatedBytesForCurrentThread() - _before);
                    socket.Close();
                    return;
                }
                socket.Send(_message);
            }
        }

        public void OnWritable(LoopSocket socket)
        {
        }

        public void OnClosed(LoopSocket socket, LoopError reason) => Done.TrySetException(new InvalidOperationException($"closed: {reason}"));
    }
}
