using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TestBackend;
using Tunnel2.TestBackend.Diagnostics;
using Tunnel2.ProxyEntry.Tcp;
using Tunnel2.TunnelServer;
using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// The real TestBackend and TunnelServer on 127.0.0.1, port 0, in this process, plus as many real TunnelClients as a
/// test asks for. Everything talks over loopback sockets.
/// </summary>
public sealed class TunnelStack : IAsyncDisposable
{
    public const string Token = "e2e-test-token-0123456789";
    private static readonly string[] QuietLogs = ["--Serilog:MinimumLevel:Default=Warning"];

    /// <summary>
    /// The public rate limits off (the crowd tests send thousands of requests from one address); the tests of the
    /// limits themselves pass their own after these, and the last value given wins.
    /// </summary>
    public static readonly string[] NoRateLimits = ["--ProxyEntry:SessionDefaults:RateLimit:PerSecond=0", "--ProxyEntry:RateLimits:PerVisitor:PerSecond=0"];

    private readonly List<TunnelClientHandle> _clients = [];
    private readonly string[] _serverArgs;
    private bool _serverRunning = true;

    private TunnelStack(WebApplication backend, WebApplication server, string[] serverArgs)
    {
        _serverArgs = serverArgs;
        Backend = backend;
        Server = server;
        BackendUrl = new Uri(backend.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First());
        ServerEndpoints endpoints = server.Services.GetRequiredService<ServerEndpoints>();
        PublicUrl = endpoints.PublicUrl;
        TunnelUrl = endpoints.TunnelUrl;
    }

    public WebApplication Backend { get; }

    public WebApplication Server { get; private set; }

    public Uri BackendUrl { get; }

    public Uri PublicUrl { get; }

    public Uri TunnelUrl { get; }

    public SessionRegistry Registry => Server.Services.GetRequiredService<SessionRegistry>();

    /// <summary>The backend's counters of <c>/loadtest/delay</c> waits (this stack's backend only).</summary>
    public DelayStatistics Delays => Backend.Services.GetRequiredService<DelayStatistics>();

    public static async Task<TunnelStack> StartAsync(params string[] serverArgs)
    {
        WebApplication backend = TestBackendApp.Create(["--urls", "http://127.0.0.1:0", .. QuietLogs]);
        await backend.StartAsync();
        WebApplication server = CreateServer(publicPort: 0, tunnelPort: 0, serverArgs);
        await server.StartAsync();
        return new TunnelStack(backend, server, serverArgs);
    }

    /// <summary>Stops the server (its listeners close, its uplinks drop); clients and backend keep running.</summary>
    public async Task StopServerAsync()
    {
        _serverRunning = false;
        await Server.StopAsync();
        await Server.DisposeAsync();
    }

    /// <summary>Starts a new server, with the same settings, on the ports the first one bound.</summary>
    public async Task StartServerAgainAsync()
    {
        Server = CreateServer(PublicUrl.Port, TunnelUrl.Port, _serverArgs);
        await Server.StartAsync();
        _serverRunning = true;
    }

    /// <summary>The public URL of <paramref name="pathAndQuery"/> on the backend behind <paramref name="session"/>.</summary>
    public Uri SessionUrl(string session, string pathAndQuery) => new(PublicUrl, $"/session/{session}{pathAndQuery}");

    /// <summary>Starts a client and waits until its uplink is registered with the server.</summary>
    public async Task<TunnelClientHandle> StartClientAsync(string session, Uri? backend = null, string? token = null, int maxConcurrency = 100, params string[] extraArgs)
    {
        int before = Registry.GetUplinks(session).Count;
        TunnelClientHandle client = StartClientWithoutWaiting(session, backend, token, maxConcurrency, extraArgs);
        await client.StartAsync();
        try
        {
            await Eventually.WaitUntilAsync(() => client.Status.IsConnected && Registry.GetUplinks(session).Count > before,
                $"the client of session {session} is connected");
        }
        catch (Xunit.Sdk.XunitException ex)
        {
            Assert.Fail($"{ex.Message} The client: {client.Status.ConnectCount} connects, {Registry.GetUplinks(session).Count} uplinks registered, "
                        + $"exit code {client.Status.ExitCode}, stopping {client.Stopping.IsCancellationRequested}, last disconnect '{client.Status.LastDisconnectReason}'.");
        }
        return client;
    }

    /// <summary>Starts a client with its request inspector on a port of its own (<see cref="TunnelClientHandle.InspectorUrl"/>) and waits until it is connected.</summary>
    public Task<TunnelClientHandle> StartInspectedClientAsync(string session, Uri? backend = null, int maxConcurrency = 100, params string[] extraArgs) =>
        StartClientAsync(session, backend, token: null, maxConcurrency, ["--inspect-url", "http://127.0.0.1:0", .. extraArgs]);

    public TunnelClientHandle StartClientWithoutWaiting(string session, Uri? backend = null, string? token = null, int maxConcurrency = 100, params string[] extraArgs)
    {
        var client = new TunnelClientHandle(Tunnel2.TunnelClient.TunnelClientApp.Create([
            "--server", TunnelUrl.ToString().TrimEnd('/'),
            "--session", session,
            "--token", token ?? Token,
            "--backend", (backend ?? BackendUrl).ToString().TrimEnd('/'),
            "--max-concurrency", maxConcurrency.ToString(System.Globalization.CultureInfo.InvariantCulture),
            "--TunnelClient:Uplink:ReconnectMinDelay=00:00:00.050",
            "--TunnelClient:Uplink:ReconnectMaxDelay=00:00:00.500",
            .. QuietLogs,
            .. CapturedLogs.ServerArgs,
            .. extraArgs,
        ]));
        _clients.Add(client);
        return client;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (TunnelClientHandle client in _clients)
        {
            await client.DisposeAsync();
        }

        if (_serverRunning)
        {
            // The server's event loop (TCP callers, plain uplinks), if it runs one: a blocking call made on it (the guard
            // trips) or any other exception a loop callback threw fails the test that ran it.
            TcpCallerLoop? loop = Server.Services.GetService<ServerLoop>()?.Started;
            await Server.StopAsync();
            await Server.DisposeAsync();
            Assert.True((loop?.FaultCount ?? 0) == 0, $"The server's event loop had {loop?.FaultCount} faults (see the server's log).");
        }

        await Backend.StopAsync();
        await Backend.DisposeAsync();
    }

    private static WebApplication CreateServer(int publicPort, int tunnelPort, string[] serverArgs) => TunnelServerApp.Create([
        $"--TunnelServer:Listeners:PublicUrl=http://127.0.0.1:{publicPort}",
        $"--TunnelServer:Listeners:TunnelUrl=http://127.0.0.1:{tunnelPort}",
        $"--TunnelServer:Token={Token}",
        .. QuietLogs,
        .. CapturedLogs.ServerArgs,
        .. NoRateLimits,
        .. serverArgs,
    ]);
}
