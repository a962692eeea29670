using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops;

namespace Tunnel2.UnitTests.Loops;

/// <summary>A loop for one test: faults are collected (and fail the test at dispose), work can be run on it and awaited.</summary>
internal sealed class LoopHarness : IDisposable
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    public LoopHarness(string name = "test-loop") => Loop = new EventLoop(name, Faults.Enqueue);

    public EventLoop Loop { get; }

    public ConcurrentQueue<Exception> Faults { get; } = new();

    /// <summary>Runs <paramref name="work"/> on the loop and returns its value.</summary>
    public Task<T> OnLoopAsync<T>(Func<T> work)
    {
        var done = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(Loop.Post(() =>
        {
            try
            {
                done.SetResult(work());
            }
            catch (Exception fault)
            {
                done.SetException(fault);
            }
        }));
        return done.Task.WaitAsync(Timeout);
    }

    public Task OnLoopAsync(Action work) => OnLoopAsync(() => { work(); return true; });

    public static Socket Listening()
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        socket.Listen(2048);
        return socket;
    }

    public static async Task<Socket> ConnectAsync(int port)
    {
        var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await client.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port)).WaitAsync(Timeout);
        return client;
    }

    /// <summary>Reads until the peer's FIN.</summary>
    public static async Task<byte[]> ReadToEndAsync(Socket socket)
    {
        using var all = new MemoryStream();
        byte[] buffer = new byte[64 * 1024];
        int n;
        while ((n = await socket.ReceiveAsync(buffer.AsMemory()).AsTask().WaitAsync(Timeout)) > 0)
        {
            all.Write(buffer, 0, n);
        }
        return all.ToArray();
    }

    public void Dispose()
    {
        Loop.Dispose();
        Assert.Empty(Faults);
    }
}
