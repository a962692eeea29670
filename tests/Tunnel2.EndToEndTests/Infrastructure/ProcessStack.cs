using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.TestBackend;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// TestBackend (or another backend) in this process, TunnelServer and TunnelClient as processes of their own serving
/// one session: for tests that measure a tunnel process apart from the test's own memory and threads.
/// </summary>
public sealed class ProcessStack : IAsyncDisposable
{
    private readonly WebApplication? _backend;

    private ProcessStack(WebApplication? backend, Uri backendUrl, TunnelProcess server, TunnelProcess client, Uri publicUrl, Uri tunnelUrl, string session)
    {
        _backend = backend;
        BackendUrl = backendUrl;
        Server = server;
        Client = client;
        PublicUrl = publicUrl;
        TunnelUrl = tunnelUrl;
        Session = session;
    }

    /// <summary>The backend the client serves the session from (the test backend this stack started, or the one it was given).</summary>
    public Uri BackendUrl { get; }

    public TunnelProcess Server { get; }

    public TunnelProcess Client { get; }

    public Uri PublicUrl { get; }

    public Uri TunnelUrl { get; }

    public string Session { get; }

    /// <summary>Starts the three and returns once a ping through the tunnel answers.</summary>
    /// <param name="serverArgs">More arguments for the TunnelServer process (settings, a credentials file).</param>
    public static Task<ProcessStack> StartAsync(string session, params string[] serverArgs) =>
        StartAsync(session, new ProcessStackOptions { ServerArgs = serverArgs });

    /// <summary>Starts the backend (unless one is given), the server and the client, and returns once a probe through the tunnel answers 200.</summary>
    public static async Task<ProcessStack> StartAsync(string session, ProcessStackOptions options)
    {
        WebApplication? backend = null;
        TunnelProcess? server = null;
        TunnelProcess? client = null;
        try
        {
            Uri backendUrl = options.BackendUrl ?? new Uri((backend = await StartTestBackendAsync()).Services.GetRequiredService<IServer>()
                .Features.Get<IServerAddressesFeature>()!.Addresses.First());
            server = TunnelProcess.StartServer("server", options.Environment,
                ["--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0", "--token", TunnelStack.Token, .. options.ServerArgs]);
            (Uri publicUrl, Uri tunnelUrl) = await server.WaitForServerUrlsAsync();
            client = TunnelProcess.StartClient("client", options.Environment,
                ["--server", tunnelUrl.ToString().TrimEnd('/'), "--session", session, "--token", TunnelStack.Token,
                    "--backend", backendUrl.ToString().TrimEnd('/'), .. options.ClientArgs]);
            var stack = new ProcessStack(backend, backendUrl, server, client, publicUrl, tunnelUrl, session);
            await stack.WaitUntilServedAsync(options);
            return stack;
        }
        catch
        {
            if (client is not null)
            {
                await client.DisposeAsync();
            }

            if (server is not null)
            {
                await server.DisposeAsync();
            }

            if (backend is not null)
            {
                await backend.DisposeAsync();
            }

            throw;
        }
    }

    /// <summary>The public URL of <paramref name="pathAndQuery"/> on the backend behind the session.</summary>
    public Uri SessionUrl(string pathAndQuery) => new(PublicUrl, $"/session/{Session}{pathAndQuery}");

    public async ValueTask DisposeAsync()
    {
        await Client.DisposeAsync();
        await Server.DisposeAsync();
        if (_backend is not null)
        {
            await _backend.DisposeAsync();
        }
    }

    private static async Task<WebApplication> StartTestBackendAsync()
    {
        WebApplication backend = TestBackendApp.Create(["--urls", "http://127.0.0.1:0", "--Serilog:MinimumLevel:Default=Warning"]);
        await backend.StartAsync();
        return backend;
    }

    private async Task WaitUntilServedAsync(ProcessStackOptions options)
    {
        using HttpClient http = CallerHttp.Create();
        await Eventually.WaitUntilAsync(async () =>
        {
            using var probe = new HttpRequestMessage(HttpMethod.Get, options.ProbeHost is null ? SessionUrl(options.ProbePath) : new Uri(PublicUrl, options.ProbePath));
            probe.Headers.Host = options.ProbeHost;
            foreach ((string name, string value) in options.ProbeHeaders)
            {
                probe.Headers.Add(name, value);
            }

            using HttpResponseMessage answer = await http.SendAsync(probe);
            return answer.StatusCode == HttpStatusCode.OK;
        }, "the client process serves the session");
    }
}

/// <summary>What a <see cref="ProcessStack"/> starts with.</summary>
public sealed record ProcessStackOptions
{
    /// <summary>More arguments for the TunnelServer process (settings, a credentials file).</summary>
    public string[] ServerArgs { get; init; } = [];

    /// <summary>More arguments for the TunnelClient process.</summary>
    public string[] ClientArgs { get; init; } = [];

    /// <summary>The client's backend; null starts TestBackend in this process.</summary>
    public Uri? BackendUrl { get; init; }

    /// <summary>The path (below the session) whose 200 says the stack is up.</summary>
    public string ProbePath { get; init; } = "/loadtest/ping";

    /// <summary>A host name of the session's own: the probe asks for <see cref="ProbePath"/> on it instead of under <c>/session/{id}</c>.</summary>
    public string? ProbeHost { get; init; }

    /// <summary>Headers the probe must carry (a session's visitor credentials).</summary>
    public IReadOnlyDictionary<string, string> ProbeHeaders { get; init; } = new Dictionary<string, string>();

    /// <summary>More environment variables for both tunnel processes (a runtime switch).</summary>
    public IReadOnlyDictionary<string, string> Environment { get; init; } = new Dictionary<string, string>();
}
