using System.Net;
using System.Text.Json;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>
/// How a session is reached, set in its own entry of the built server's options: its own host names
/// (<c>ProxyEntry:Sessions:{id}:Hosts</c>) and no path routing (<c>PathRouting=false</c>); and a host claimed for two
/// sessions stopping the start.
/// </summary>
public sealed class SessionHostsProcessTests
{
    [Fact]
    public async Task A_session_reached_only_by_its_own_host_answers_its_path_as_a_session_nobody_serves()
    {
        string session = $"own-host-{Guid.NewGuid():N}"[..24];
        string host = $"{session}.example.test";
        await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
        {
            ServerArgs = [$"--ProxyEntry:Sessions:{session}:Hosts:0={host}", $"--ProxyEntry:Sessions:{session}:PathRouting=false"],
            ProbeHost = host,
        });
        using HttpClient http = CallerHttp.Create();

        using var byHost = new HttpRequestMessage(HttpMethod.Get, new Uri(stack.PublicUrl, "/loadtest/ping"));
        byHost.Headers.Host = host;
        using HttpResponseMessage hostAnswer = await http.SendAsync(byHost);
        using HttpResponseMessage pathAnswer = await http.GetAsync(stack.SessionUrl("/loadtest/ping"));
        using HttpResponseMessage unknownAnswer = await http.GetAsync(new Uri(stack.PublicUrl, "/session/nobody-serves-this/loadtest/ping"));

        Assert.Equal("pong", await hostAnswer.Content.ReadAsStringAsync());
        Assert.Equal(HttpStatusCode.NotFound, pathAnswer.StatusCode);
        using JsonDocument path = JsonDocument.Parse(await pathAnswer.Content.ReadAsStringAsync());
        using JsonDocument unknown = JsonDocument.Parse(await unknownAnswer.Content.ReadAsStringAsync());
        Assert.Equal(unknown.RootElement.GetProperty("type").GetString(), path.RootElement.GetProperty("type").GetString());
        Assert.Equal(unknown.RootElement.GetProperty("detail").GetString()!.Replace("nobody-serves-this", session, StringComparison.Ordinal),
            path.RootElement.GetProperty("detail").GetString());
        // The client is told the address that reaches its session: its own host, not a path that 404s.
        await stack.Client.WaitForOutputAsync(new Regex(Regex.Escape($"http://{host}:{stack.PublicUrl.Port}/")), TimeSpan.FromSeconds(10));
    }

    [Fact]
    public async Task A_host_claimed_for_two_sessions_exits_2_with_one_line_naming_both_keys()
    {
        await using TunnelProcess process = TunnelProcess.StartServer("server", "--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0",
            "--token", TunnelStack.Token, "--ProxyEntry:Routing:Hosts:app.example.org=demo", "--ProxyEntry:Sessions:shop:Hosts:0=app.example.org");

        Assert.Equal(2, await process.WaitForExitAsync(TimeSpan.FromSeconds(30)));
        Assert.Contains("ProxyEntry:Sessions:shop:Hosts: host 'app.example.org' is already claimed for session 'demo' by ProxyEntry:Routing:Hosts:app.example.org",
            process.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("listening", process.Output, StringComparison.OrdinalIgnoreCase);
    }
}
