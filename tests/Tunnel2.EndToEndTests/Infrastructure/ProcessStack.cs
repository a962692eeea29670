using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.TestBackend;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// TestBackend in this process, TunnelServer and TunnelClient as processes of their own serving one session: for tests
/// that measure a tunnel process apart from the test's own memory and threads.
/// </summary>
public sealed class ProcessStack : IAsyncDisposable
{
    private readonly WebApplication _backend;

    private ProcessStack(WebApplication backend, TunnelProcess server, TunnelProcess client, Uri publicUrl, Uri tunnelUrl, string session)
    {
        _backend = backend;
        Server = server;
        Client = client;
        PublicUrl = publicUrl;
        TunnelUrl = tunnelUrl;
        Session = session;
    }

    public TunnelProcess Server { get; }

    public TunnelProcess Client { get; }

    public Uri PublicUrl { get; }

    public Uri TunnelUrl { get; }

    public string Session { get; }

    /// <summary>Starts the three and returns once a ping through the tunnel answers.</summary>
    /// <param name="serverArgs">More arguments for the TunnelServer process (settings, a credentials file).</param>
    public static Task<ProcessStack> StartAsync(string session, params string[] serverArgs) =>
        StartAsync(session, new Dictionary<string, string>(), serverArgs);

    /// <param name="probeHeaders">Headers the ping that says the stack is up must carry (a session's visitor credentials).</param>
    /// <param name="serverArgs">More arguments for the TunnelServer process (settings, a credentials file).</param>
    public static async Task<ProcessStack> StartAsync(string session, IReadOnlyDictionary<string, string> probeHeaders, params string[] serverArgs)
    {
        WebApplication backend = TestBackendApp.Create(["--urls", "http://127.0.0.1:0", "--Serilog:MinimumLevel:Default=Warning"]);
        await backend.StartAsync();
        TunnelProcess? server = null;
        TunnelProcess? client = null;
        try
        {
            var backendUrl = new Uri(backend.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First());
            server = TunnelProcess.StartServer("server",
                ["--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0", "--token", TunnelStack.Token, .. serverArgs]);
            (Uri publicUrl, Uri tunnelUrl) = await server.WaitForServerUrlsAsync();
            client = TunnelProcess.StartClient("client",
                "--server", tunnelUrl.ToString().TrimEnd('/'), "--session", session, "--token", TunnelStack.Token,
                "--backend", backendUrl.ToString().TrimEnd('/'));
            var stack = new ProcessStack(backend, server, client, publicUrl, tunnelUrl, session);
            using HttpClient http = CallerHttp.Create();
            await Eventually.WaitUntilAsync(async () =>
            {
                using var ping = new HttpRequestMessage(HttpMethod.Get, stack.SessionUrl("/loadtest/ping"));
                foreach ((string name, string value) in probeHeaders)
                {
                    ping.Headers.Add(name, value);
                }

                using HttpResponseMessage answer = await http.SendAsync(ping);
                return answer.StatusCode == HttpStatusCode.OK;
            }, "the client process serves the session");
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

            await backend.DisposeAsync();
            throw;
        }
    }

    /// <summary>The public URL of <paramref name="pathAndQuery"/> on the backend behind the session.</summary>
    public Uri SessionUrl(string pathAndQuery) => new(PublicUrl, $"/session/{Session}{pathAndQuery}");

    public async ValueTask DisposeAsync()
    {
        await Client.DisposeAsync();
        await Server.DisposeAsync();
        await _backend.DisposeAsync();
    }
}
