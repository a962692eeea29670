using System.Net;
using System.Net.Sockets;
using Tunnel2.TunnelClient.Relay.OnLoop;
using Tunnel2.UnitTests.Loops;

namespace Tunnel2.UnitTests.Relay.OnLoop;

/// <summary>
/// What the kernel refuses of a write to a backend on the client's loop waits in a buffer of the frames' pool: a body
/// pumped into a backend that reads slower than the uplink brings it has a part of nearly every write refused, and a
/// new array for each would make the relay's garbage grow with the bytes relayed.
/// </summary>
public sealed class LoopSocketStreamWriteBufferTests : IDisposable
{
    private const int Chunk = 128 * 1024;

    private readonly LoopHarness _harness = new("client-loop-test");
    private readonly Socket _listener = LoopHarness.Listening();

    public void Dispose()
    {
        _listener.Dispose();
        _harness.Dispose();
    }

    [Fact]
    public async Task RefusedWritesReuseTheFramesBuffersInsteadOfCopyingIntoANewArrayEachTime()
    {
        const long warmup = 8L * 1024 * 1024;
        const long total = 72L * 1024 * 1024;
        var dialer = new LoopBackendDialer(_harness.Loop, new Uri($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndPoint!).Port}"));
        Task<Socket> accepted = _listener.AcceptAsync();
        (Socket _, LoopSocketStream stream) = await dialer.ConnectAsync(static socket => socket.SendBufferSize = 16 * 1024, CancellationToken.None)
            .WaitAsync(LoopHarness.Timeout);
        using Socket backend = await accepted.WaitAsync(LoopHarness.Timeout);
        backend.ReceiveBufferSize = 16 * 1024;
        Task<long> draining = Task.Factory.StartNew(() => Drain(backend, total), TaskCreationOptions.LongRunning);

        byte[] chunk = new byte[Chunk];
        int refused = 0;
        long allocated = 0; // by the writes themselves, on the writer's thread: the refused part is copied there
        await using (stream)
        {
            for (long sent = 0; sent < total; sent += Chunk)
            {
                long before = GC.GetAllocatedBytesForCurrentThread();
                ValueTask write = stream.WriteAsync(chunk);
                if (sent >= warmup)
                {
                    allocated += GC.GetAllocatedBytesForCurrentThread() - before;
                    refused += write.IsCompleted ? 0 : 1;
                }

                await write.AsTask().WaitAsync(LoopHarness.Timeout);
            }

            Assert.Equal(total, await draining.WaitAsync(LoopHarness.Timeout));
        }

        Assert.True(refused > 16, $"only {refused} writes were refused in part: the test did not fill the kernel's buffer");
        Assert.True(allocated < refused * 16L * 1024, $"{refused} writes refused in part allocated {allocated / 1024} KiB");
        Assert.Empty(_harness.Faults);
    }

    private static long Drain(Socket socket, long total)
    {
        byte[] into = new byte[8 * 1024];
        long got = 0;
        while (got < total)
        {
            int n = socket.Receive(into);
            if (n == 0)
            {
                break;
            }

            got += n;
        }

        return got;
    }
}
