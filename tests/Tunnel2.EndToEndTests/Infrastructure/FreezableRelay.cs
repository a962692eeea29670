using System.Net;
using System.Net.Sockets;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A TCP relay on 127.0.0.1 in front of a target. <see cref="FreezeExisting"/> stops moving bytes on the connections
/// open now, in both directions, while keeping their sockets open: to each end the other looks alive but silent
/// (a half-open connection, as after a NAT or Wi-Fi drop). New connections relay normally.
/// </summary>
public sealed class FreezableRelay : IAsyncDisposable
{
    private readonly TcpListener _listener;
    private readonly Uri _target;
    private readonly CancellationTokenSource _disposed = new();
    private readonly List<Connection> _connections = [];
    private readonly Lock _sync = new();
    private readonly Task _accepting;

    public FreezableRelay(Uri target)
    {
        _target = target;
        _listener = new TcpListener(IPAddress.Loopback, 0);
        _listener.Start();
        Url = new Uri($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}");
        _accepting = AcceptAsync();
    }

    public Uri Url { get; }

    public int ConnectionCount
    {
        get
        {
            lock (_sync)
            {
                return _connections.Count;
            }
        }
    }

    public void FreezeExisting()
    {
        lock (_sync)
        {
            foreach (Connection connection in _connections)
            {
                connection.Frozen.TrySetResult();
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _disposed.CancelAsync();
        _listener.Stop();
        lock (_sync)
        {
            foreach (Connection connection in _connections)
            {
                connection.Inbound.Dispose();
                connection.Outbound.Dispose();
            }
        }

        try
        {
            await _accepting;
        }
        catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // Stopped.
        }

        _disposed.Dispose();
    }

    private async Task AcceptAsync()
    {
        while (!_disposed.IsCancellationRequested)
        {
            Socket inbound = await _listener.AcceptSocketAsync(_disposed.Token);
            var outbound = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            await outbound.ConnectAsync(_target.Host, _target.Port, _disposed.Token);
            var connection = new Connection(inbound, outbound);
            lock (_sync)
            {
                _connections.Add(connection);
            }

            _ = PumpAsync(connection, inbound, outbound);
            _ = PumpAsync(connection, outbound, inbound);
        }
    }

    private async Task PumpAsync(Connection connection, Socket from, Socket to)
    {
        byte[] buffer = new byte[16 * 1024];
        try
        {
            while (true)
            {
                Task<int> read = from.ReceiveAsync(buffer, SocketFlags.None, _disposed.Token).AsTask();
                if (await Task.WhenAny(read, connection.Frozen.Task) != read)
                {
                    return; // frozen: stop reading and writing, keep both sockets open
                }

                int count = await read;
                if (count == 0 || connection.Frozen.Task.IsCompleted)
                {
                    if (count == 0)
                    {
                        to.Shutdown(SocketShutdown.Send);
                    }

                    return;
                }

                await to.SendAsync(buffer.AsMemory(0, count), SocketFlags.None, _disposed.Token);
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // The relay or one end closed.
        }
    }

    private sealed record Connection(Socket Inbound, Socket Outbound)
    {
        public TaskCompletionSource Frozen { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}
