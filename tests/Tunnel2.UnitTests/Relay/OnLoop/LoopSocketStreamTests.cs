using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Text;
using Tunnel2.Loops;
using Tunnel2.TunnelClient.Relay.OnLoop;
using Tunnel2.UnitTests.Loops;

namespace Tunnel2.UnitTests.Relay.OnLoop;

/// <summary>
/// A backend connection on the client's event loop (<c>TunnelClient:Backends:Relay</c> = <c>Loop</c>): connected without
/// blocking on the loop, a read that waits is completed on the loop (the relay goes on there), an end or a failure off
/// it, a refused write is finished by the loop, and an abort resets the backend.
/// </summary>
public sealed class LoopSocketStreamTests : IDisposable
{
    private readonly LoopHarness _harness = new("client-loop-test");
    private readonly Socket _listener = LoopHarness.Listening();

    private int Port => ((IPEndPoint)_listener.LocalEndPoint!).Port;

    public void Dispose()
    {
        _listener.Dispose();
        _harness.Dispose();
    }

    [Fact]
    public async Task BytesGoBothWaysThroughTheLoop()
    {
        (LoopSocketStream stream, Socket backend) = await ConnectAsync();
        await using (stream)
        using (backend)
        {
            await stream.WriteAsync("GET / HTTP/1.1\r\n\r\n"u8.ToArray()).AsTask().WaitAsync(LoopHarness.Timeout);
            byte[] request = new byte[64];
            int got = await backend.ReceiveAsync(request.AsMemory()).AsTask().WaitAsync(LoopHarness.Timeout);
            Assert.Equal("GET / HTTP/1.1\r\n\r\n", Encoding.ASCII.GetString(request, 0, got));

            await backend.SendAsync("HTTP/1.1 204 No Content\r\n\r\n"u8.ToArray());
            byte[] answer = new byte[64];
            int read = await stream.ReadAsync(answer).AsTask().WaitAsync(LoopHarness.Timeout);
            Assert.Equal("HTTP/1.1 204 No Content\r\n\r\n", Encoding.ASCII.GetString(answer, 0, read));
        }
    }

    [Fact]
    public async Task AReadThatWaitsIsCompletedOnTheLoopThread()
    {
        (LoopSocketStream stream, Socket backend) = await ConnectAsync();
        await using (stream)
        using (backend)
        {
            byte[] answer = new byte[16];
            (bool OnLoop, int Bytes) seen = await ObserveReadAsync(stream, answer, () => backend.Send("pong"u8));

            Assert.True(seen.OnLoop, "the waiting read should go on on the loop, in the turn that read the answer");
            Assert.Equal("pong", Encoding.ASCII.GetString(answer, 0, seen.Bytes));
        }
    }

    [Fact]
    public async Task TheBackendsEndIsReadOffTheLoop()
    {
        (LoopSocketStream stream, Socket backend) = await ConnectAsync();
        await using (stream)
        {
            (bool OnLoop, int Bytes) seen = await ObserveReadAsync(stream, new byte[16], () => backend.Shutdown(SocketShutdown.Send));
            backend.Dispose();

            Assert.Equal(0, seen.Bytes);
            Assert.False(seen.OnLoop, "what follows an end (a retry, a log line) belongs on the thread pool");
        }
    }

    [Fact]
    public async Task AWriteTheKernelRefusesIsFinishedByTheLoopInOrder()
    {
        (LoopSocketStream stream, Socket backend) = await ConnectAsync();
        await using (stream)
        using (backend)
        {
            byte[] body = new byte[16 * 1024 * 1024];
            new Random(7).NextBytes(body);
            Task write = stream.WriteAsync(body).AsTask(); // far more than the socket buffers hold: the loop sends the rest
            byte[] received = new byte[body.Length];
            int total = 0;
            while (total < received.Length)
            {
                int n = await backend.ReceiveAsync(received.AsMemory(total)).AsTask().WaitAsync(LoopHarness.Timeout);
                Assert.True(n > 0, "the backend saw the connection end before the whole body");
                total += n;
            }

            await write.WaitAsync(LoopHarness.Timeout);
            Assert.Equal(body, received);
        }
    }

    [Fact]
    public async Task AScatterReadOnTheLoopFillsTheBuffersInOrderThenSeesTheEnd()
    {
        (LoopSocketStream stream, Socket backend) = await ConnectAsync();
        await using (stream)
        using (backend)
        {
            byte[] first = new byte[4], second = new byte[4], third = new byte[4];
            await ObserveReadAsync(stream, [], () => backend.Send("0123456789"u8)); // a zero-byte read: waits for bytes

            int read = await _harness.OnLoopAsync(() => stream.ReceiveNow([first, second, third]));
            int none = await _harness.OnLoopAsync(() => stream.ReceiveNow([first]));

            Assert.Equal(10, read);
            Assert.Equal("0123|4567|89", $"{Encoding.ASCII.GetString(first)}|{Encoding.ASCII.GetString(second)}|{Encoding.ASCII.GetString(third, 0, 2)}");
            Assert.Equal(-1, none);

            await ObserveReadAsync(stream, [], () => backend.Shutdown(SocketShutdown.Send));
            Assert.Equal(0, await _harness.OnLoopAsync(() => stream.ReceiveNow([first])));
        }
    }

    [Fact]
    public async Task ACancelledReadEndsWithoutBytes()
    {
        (LoopSocketStream stream, Socket backend) = await ConnectAsync();
        await using (stream)
        using (backend)
        {
            using var cancel = new CancellationTokenSource();
            ValueTask<int> read = stream.ReadAsync(new byte[16], cancel.Token);
            Assert.False(read.IsCompleted);
            await cancel.CancelAsync();

            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => read.AsTask().WaitAsync(LoopHarness.Timeout));
        }
    }

    [Fact]
    public async Task AnAbortResetsTheBackend()
    {
        (LoopSocketStream stream, Socket backend) = await ConnectAsync();
        await using (stream)
        using (backend)
        {
            stream.Abort();

            var reset = await Assert.ThrowsAsync<SocketException>(async () => await backend.ReceiveAsync(new byte[16].AsMemory()).AsTask().WaitAsync(LoopHarness.Timeout));
            Assert.Equal(SocketError.ConnectionReset, reset.SocketErrorCode);
        }
    }

    [Fact]
    public async Task AnUnreachableBackendFailsTheConnectWithNoFaultOnTheLoop()
    {
        int closedPort;
        using (Socket unused = LoopHarness.Listening())
        {
            closedPort = ((IPEndPoint)unused.LocalEndPoint!).Port;
        }

        var dialer = new LoopBackendDialer(_harness.Loop, new Uri($"http://localhost:{closedPort}"));

        await Assert.ThrowsAsync<SocketException>(() => dialer.ConnectAsync(static _ => { }, CancellationToken.None).WaitAsync(LoopHarness.Timeout));
        Assert.Empty(_harness.Faults);
    }

    private async Task<(LoopSocketStream Stream, Socket Backend)> ConnectAsync()
    {
        var dialer = new LoopBackendDialer(_harness.Loop, new Uri($"http://127.0.0.1:{Port}"));
        Task<Socket> accepted = _listener.AcceptAsync();
        (Socket _, LoopSocketStream stream) = await dialer.ConnectAsync(static _ => { }, CancellationToken.None).WaitAsync(LoopHarness.Timeout);
        return (stream, await accepted.WaitAsync(LoopHarness.Timeout));
    }

    /// <summary>Starts a read that has to wait, runs <paramref name="answer"/>, and says on which thread the read went on.</summary>
    private static async Task<(bool OnLoop, int Bytes)> ObserveReadAsync(LoopSocketStream stream, byte[] into, Action answer)
    {
        ValueTask<int> read = stream.ReadAsync(into);
        Assert.False(read.IsCompleted);
        var resumed = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter awaiter = read.ConfigureAwait(false).GetAwaiter();
        awaiter.UnsafeOnCompleted(() => resumed.SetResult(EventLoop.IsLoopThread));
        answer();
        bool onLoop = await resumed.Task.WaitAsync(LoopHarness.Timeout);
        return (onLoop, awaiter.GetResult());
    }
}
