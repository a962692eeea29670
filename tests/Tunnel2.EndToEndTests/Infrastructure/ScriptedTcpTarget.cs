using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A raw TCP server on 127.0.0.1, port 0, for the TCP tunnel's tests: every accepted connection runs the test's script
/// (echo, send and half-close, die mid-stream …) and is counted, so a test can tell whether anything reached it.
/// </summary>
public sealed class ScriptedTcpTarget : IAsyncDisposable
{
    private readonly TcpListener _listener;
    private readonly Func<Socket, Task> _script;
    private readonly CancellationTokenSource _stop = new();
    private readonly List<Task> _connections = [];
    private readonly Task _accepting;
    private int _accepted;

    public ScriptedTcpTarget(Func<Socket, Task> script)
    {
        _script = script;
        _listener = new TcpListener(IPAddress.Loopback, 0);
        _listener.Start();
        Port = ((IPEndPoint)_listener.LocalEndpoint).Port;
        _accepting = AcceptLoopAsync();
    }

    public int Port { get; }

    /// <summary><c>127.0.0.1:port</c>, as <c>--tcp</c> takes it.</summary>
    public string Address => $"127.0.0.1:{Port}";

    public int AcceptedConnections => Volatile.Read(ref _accepted);

    /// <summary>Echoes every byte; after the caller's FIN, sends its own (a half-close answered in kind).</summary>
    public static ScriptedTcpTarget Echo() => new(async socket =>
    {
        byte[] buffer = new byte[64 * 1024];
        int read;
        while ((read = await socket.ReceiveAsync(buffer)) > 0)
        {
            await SendAllAsync(socket, buffer.AsMemory(0, read));
        }

        socket.Shutdown(SocketShutdown.Send);
    });

    public static async Task SendAllAsync(Socket socket, ReadOnlyMemory<byte> bytes)
    {
        while (!bytes.IsEmpty)
        {
            bytes = bytes[await socket.SendAsync(bytes)..];
        }
    }

    /// <summary>Reads until the peer's FIN; an error (a reset) ends the read as well, and is reported by <paramref name="reset"/>.</summary>
    public static async Task<byte[]> ReadToEndAsync(Socket socket, StrongBox<bool>? reset = null)
    {
        var received = new MemoryStream();
        byte[] buffer = new byte[64 * 1024];
        try
        {
            int read;
            while ((read = await socket.ReceiveAsync(buffer)) > 0)
            {
                received.Write(buffer, 0, read);
            }
        }
        catch (SocketException)
        {
            reset?.Value = true;
        }

        return received.ToArray();
    }

    public async ValueTask DisposeAsync()
    {
        _stop.Cancel();
        _listener.Stop();
        await Task.WhenAll([_accepting, .. _connections]).WaitAsync(TimeSpan.FromSeconds(10)).ContinueWith(static _ => { }, TaskScheduler.Default);
        _stop.Dispose();
    }

    private async Task AcceptLoopAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            Socket socket;
            try
            {
                socket = await _listener.AcceptSocketAsync(_stop.Token);
            }
            catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }

            Interlocked.Increment(ref _accepted);
            lock (_connections)
            {
                _connections.Add(RunAsync(socket));
            }
        }
    }

    private async Task RunAsync(Socket socket)
    {
        using (socket)
        {
            try
            {
                await _script(socket);
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException or IOException or OperationCanceledException)
            {
                // the tunnel cut the connection: what the test looks at, not a failure here
            }
        }
    }
}
