using System.Net;
using System.Net.Sockets;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A TCP relay on 127.0.0.1, port 0, that forwards every connection to <c>target</c>. It can make the link half-open
/// (<see cref="Blackhole"/>: bytes stop flowing both ways but no socket closes, as when a NAT or a peer's machine
/// vanishes) and it can hold new connections back (<see cref="HoldNewConnections"/>: accepted, not yet forwarded).
/// </summary>
public sealed class TcpRelay : IDisposable
{
    private readonly IPEndPoint _target;
    private readonly TcpListener _listener;
    private readonly CancellationTokenSource _stop = new();
    private readonly Lock _sync = new();
    private readonly List<Link> _links = [];
    private TaskCompletionSource _released = CompletedGate();
    private int _accepted;

    public TcpRelay(IPEndPoint target)
    {
        _target = target;
        _listener = new TcpListener(IPAddress.Loopback, 0);
        _listener.Start();
        Url = new Uri($"http://{_listener.LocalEndpoint}");
        _ = AcceptLoopAsync();
    }

    public Uri Url { get; }

    /// <summary>Connections accepted so far.</summary>
    public int AcceptedConnections => Volatile.Read(ref _accepted);

    /// <summary>Stops forwarding on every connection open now, both ways, without closing anything. New connections still flow.</summary>
    public void Blackhole()
    {
        lock (_sync)
        {
            foreach (Link link in _links)
            {
                link.Blackholed = true;
            }
        }
    }

    /// <summary>New connections are accepted but wait, unforwarded, until <see cref="ReleaseNewConnections"/>.</summary>
    public void HoldNewConnections()
    {
        lock (_sync)
        {
            if (_released.Task.IsCompleted)
            {
                _released = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            }
        }
    }

    public void ReleaseNewConnections()
    {
        lock (_sync)
        {
            _released.TrySetResult();
        }
    }

    public void Dispose()
    {
        _stop.Cancel();
        _listener.Stop();
        ReleaseNewConnections();
        lock (_sync)
        {
            foreach (Link link in _links)
            {
                link.Dispose();
            }

            _links.Clear();
        }

        _stop.Dispose();
    }

    private static TaskCompletionSource CompletedGate()
    {
        var gate = new TaskCompletionSource();
        gate.SetResult();
        return gate;
    }

    private async Task AcceptLoopAsync()
    {
        try
        {
            while (true)
            {
                Socket caller = await _listener.AcceptSocketAsync(_stop.Token);
                Interlocked.Increment(ref _accepted);
                _ = RelayAsync(caller);
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // Disposed.
        }
    }

    private async Task RelayAsync(Socket caller)
    {
        var link = new Link(caller);
        Task released;
        lock (_sync)
        {
            if (_stop.IsCancellationRequested)
            {
                link.Dispose();
                return;
            }

            _links.Add(link);
            released = _released.Task;
        }

        try
        {
            await released.WaitAsync(_stop.Token);
            await link.Target.ConnectAsync(_target, _stop.Token);
        }
        catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            link.Dispose(); // the target is down: the caller sees its connection closed, as with no relay
            return;
        }

        await Task.WhenAll(PumpAsync(link, link.Caller, link.Target), PumpAsync(link, link.Target, link.Caller));
    }

    /// <summary>Copies one direction; a close is passed on unless the link is black-holed, in which case nothing is.</summary>
    private static async Task PumpAsync(Link link, Socket from, Socket to)
    {
        byte[] buffer = new byte[64 * 1024];
        try
        {
            while (true)
            {
                int read = await from.ReceiveAsync(buffer, SocketFlags.None);
                if (link.Blackholed)
                {
                    if (read == 0)
                    {
                        return;
                    }

                    continue; // swallowed: the other end hears nothing, and no FIN or RST either
                }

                if (read == 0)
                {
                    to.Shutdown(SocketShutdown.Send);
                    return;
                }

                await to.SendAsync(buffer.AsMemory(0, read), SocketFlags.None);
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            if (!link.Blackholed)
            {
                link.Dispose();
            }
        }
    }

    private sealed class Link : IDisposable
    {
        public volatile bool Blackholed;

        public Link(Socket caller)
        {
            Caller = caller;
            Target = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        }

        public Socket Caller { get; }

        public Socket Target { get; }

        public void Dispose()
        {
            Caller.Dispose();
            Target.Dispose();
        }
    }
}
