using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Tunnel2.Balancing.Health;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.ProxyEntry.Tcp;

namespace Tunnel2.UnitTests.Tcp.LoopRelay;

/// <summary>
/// The server's TCP door on its callers' event loop, in front of the client's loop relay (<see cref="LoopRelayHarness"/>)
/// over an in-memory uplink pair: real caller sockets connect to a session's port (<see cref="TcpSessionListener"/>), the
/// test plays the target. Both loops log through the guard (a line logged on a loop fails); a loop fault or an error
/// logged fails the test at dispose.
/// </summary>
internal sealed class LoopDoorHarness : ITcpPortHost, IAsyncDisposable
{
    private readonly LoopRelayHarness _client;
    private readonly LoopRelayHarness? _refusing;
    private readonly Socket? _closedPort;
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();
    private readonly TcpSessionListener _port;
    private readonly TcpCallerLoop _loop;
    private int _open;

    private LoopDoorHarness(LoopRelayHarness client, string engine, DoorSetup setup)
    {
        _client = client;
        Options = new TcpServerOptions { Engine = engine, EjectAfter = 0 }; // never ejected: a refusing client meets its share
        Ejection = Options.Ejection();
        Logger = client.Logging.CreateLogger("Tunnel2.TunnelServer.Tcp.TcpSessions");
        Metrics = new TcpMetrics(_services.GetRequiredService<IMeterFactory>());
        Policies = new SessionPolicies(new BalancingOptions(), new SessionDefaultsOptions { MaxTcpConnections = setup.MaxConnections },
            new Dictionary<string, SessionOptions>());
        _loop = new TcpCallerLoop(Logger);
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        socket.Listen(4096);
        _port = new TcpSessionListener(this, "door", socket, IPAddress.Loopback, ((IPEndPoint)socket.LocalEndPoint!).Port);
        if (setup.RefusingClient)
        {
            // A client whose target is a port bound but not listening: every dial of it is refused at once.
            _closedPort = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            _closedPort.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            _refusing = LoopRelayHarness.Start(target: $"127.0.0.1:{((IPEndPoint)_closedPort.LocalEndPoint!).Port}");
            _port.AddClient(_refusing.Pair.Server, weight: 1);
        }

        _port.AddClient(client.Pair.Server, weight: 1);
        _port.Start();
    }

    public TcpServerOptions Options { get; }

    public EjectionOptions Ejection { get; }

    public ILogger Logger { get; }

    public TcpMetrics Metrics { get; }

    public SessionPolicies Policies { get; }

    public TcpCallerLoop? CallerLoop => Options.Engine == TcpServerOptions.EngineLoop ? _loop : null;

    /// <summary>Callers the door counts for a drain.</summary>
    public int Open => Volatile.Read(ref _open);

    public IReadOnlyCollection<string> Lines => _client.Lines;

    /// <summary>The session's port number.</summary>
    public int Port => _port.Port;

    public static LoopDoorHarness Start(string engine = TcpServerOptions.EngineLoop) => Start(engine, new DoorSetup());

    public static LoopDoorHarness Start(string engine, DoorSetup setup) => new(LoopRelayHarness.Start(), engine, setup);

    public void ConnectionOpened() => Interlocked.Increment(ref _open);

    public void ConnectionClosed() => Interlocked.Decrement(ref _open);

    /// <summary>A caller of the session's port.</summary>
    public async Task<Socket> ConnectAsync()
    {
        var caller = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await caller.ConnectAsync(new IPEndPoint(IPAddress.Loopback, _port.Port)).WaitAsync(TimeSpan.FromSeconds(30));
        return caller;
    }

    /// <summary>The next connection the client made to the target.</summary>
    public Task<Socket> AcceptTargetAsync() => _client.AcceptAsync();

    public Task<string> WaitForLineAsync(string text) => _client.WaitForLineAsync(text);

    /// <summary>Stops the callers' loop, as a server's shutdown does, while the port still accepts.</summary>
    public void StopCallerLoop() => _loop.Dispose();

    /// <summary>Runs the idle sweep twice with a zero timeout: the first sample notes the bytes, the second finds them unmoved.</summary>
    public void SweepIdle()
    {
        _port.CloseIdle(Environment.TickCount64, 0);
        _port.CloseIdle(Environment.TickCount64, 0);
    }

    /// <summary>Waits (polling, with a deadline) until no caller is counted open.</summary>
    public async Task WaitDrainedAsync()
    {
        DateTime deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (Open > 0 || _port.OpenConnections > 0)
        {
            Assert.True(DateTime.UtcNow < deadline, $"{Open} callers still open");
            await Task.Delay(20);
        }
    }

    public async ValueTask DisposeAsync()
    {
        _port.Dispose();
        await _client.DisposeAsync();
        if (_refusing is not null)
        {
            await _refusing.DisposeAsync();
        }

        _closedPort?.Dispose();
        _loop.Dispose();
        _services.Dispose();
        Assert.Equal(0, _loop.FaultCount);
    }
}
