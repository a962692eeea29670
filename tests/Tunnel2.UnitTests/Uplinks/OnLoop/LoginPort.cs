using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Tunnel2.Loops;
using Tunnel2.Loops.Guard;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Hosting;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Uplinks;
using Tunnel2.TunnelServer.Uplinks.Handshake;
using Tunnel2.TunnelServer.Uplinks.OnLoop;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Uplinks.OnLoop;

/// <summary>
/// A plain tunnel port with the server's acceptance layers and its loop (<c>TunnelServer:Uplink:Engine</c> as given),
/// on 127.0.0.1 port 0: what <see cref="UplinkListener"/> does, without the host. Uplinks log through
/// <see cref="LoopGuardLoggerProvider"/>; a fault on the loop fails the test at dispose.
/// </summary>
internal sealed class LoginPort : IAsyncDisposable
{
    public const string Token = "the-token-123";

    private readonly ServerLoop _loop = new(NullLogger.Instance);
    private readonly ILoggerFactory _logging = LoggerFactory.Create(builder => builder.AddProvider(new LoopGuardLoggerProvider()));
    private readonly CredentialRevocation _revocation = new(NullLogger<CredentialRevocation>.Instance);
    private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
    private readonly CancellationTokenSource _stopping = new();
    private readonly List<Task> _served = [];
    private readonly UplinkAcceptor _acceptor;
    private readonly Task _accepting;

    private LoginPort(TimeSpan handshakeTimeout, string engine)
    {
        var options = new TunnelServerOptions();
        options.Uplink.Engine = engine;
        IOptions<TunnelServerOptions> server = Options.Create(options);
        var decision = new LoginDecision(new ClientAuthenticator(Token, file: null), retryAfterSeconds: 7);
        var admission = new LoginAdmission(decision, new AddressGuard(new FailedAttempts(perMinute: 10), maxUplinks: 5000), new PublicDrain());
        var responder = new HandshakeResponder(new UplinkSettings(), PublicAt(8080), Options.Create(new ProxyEntryOptions()));
        var handshake = new HandshakeLayer(new HandshakeReader(handshakeTimeout), new LoginPeer([]), admission, responder, Probe.Events, new SessionPolicies());
        var registration = new UplinkRegistration(new UplinkSettings(), Registry, _revocation, Probe.Events, _logging);
        _acceptor = new UplinkAcceptor(new TlsLayer(server, Probe.Events), handshake, new TransportSwitch(Probe.Events), registration, new LoopUplinks(server, _loop));
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen(2048);
        _accepting = AcceptAsync();
    }

    public AcceptanceProbe Probe { get; } = new();

    public SessionRegistry Registry { get; } = new();

    public int Port => ((IPEndPoint)_listener.LocalEndPoint!).Port;

    /// <summary>The server's loop once a login started it; null before, or on the runtime's sockets.</summary>
    public EventLoop? Loop => _loop.Started?.Loop;

    public static LoginPort Start(TimeSpan? handshakeTimeout = null, string engine = ServerUplinkOptions.EngineLoop) =>
        new(handshakeTimeout ?? TestTimeouts.Default, engine);

    /// <summary>A login's request head for <paramref name="session"/>, with <paramref name="token"/>.</summary>
    public static string Login(string session, string token = Token) =>
        $"GET /tunnel2/connect HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: tunnel2\r\nAuthorization: Bearer {token}\r\n"
        + $"Tunnel2-Session: {session}\r\nTunnel2-Version: 3\r\n\r\n";

    public Socket Connect()
    {
        var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        client.Connect(new IPEndPoint(IPAddress.Loopback, Port));
        return client;
    }

    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync();
        _listener.Dispose();
        await _accepting.WithTimeout();
        foreach (Uplink uplink in Registry.GetAllUplinks())
        {
            uplink.Close("test finished");
        }

        Task[] served;
        lock (_served)
        {
            served = [.. _served];
        }

        await Task.WhenAll(served).WithTimeout();
        int faults = _loop.Started?.FaultCount ?? 0;
        _loop.Dispose();
        _revocation.Dispose();
        _logging.Dispose();
        Probe.Dispose();
        _stopping.Dispose();
        Assert.Equal(0, faults);
    }

    /// <summary>The endpoints as if Kestrel had bound the public port (the 101 names the session's public URL).</summary>
    private static ServerEndpoints PublicAt(int port)
    {
        ListenOptions? bound = null;
        new KestrelServerOptions().Listen(IPAddress.Loopback, port, listen => bound = listen);
        return new ServerEndpoints { PublicListener = bound };
    }

    private async Task AcceptAsync()
    {
        while (true)
        {
            Socket socket;
            try
            {
                socket = await _listener.AcceptAsync(_stopping.Token);
            }
            catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }

            lock (_served)
            {
                _served.Add(_acceptor.ServeAsync(socket, _stopping.Token));
            }
        }
    }
}
