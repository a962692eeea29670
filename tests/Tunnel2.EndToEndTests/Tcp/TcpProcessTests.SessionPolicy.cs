using System.Net;
using System.Net.Sockets;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// A session's own settings, from the options' per-session section (<c>ProxyEntry:Sessions:&lt;id&gt;</c>), reach both
/// public doors of the built server; and an old per-session key still works, with the warning that names its new key.
/// </summary>
public sealed partial class TcpProcessTests
{
    [Fact]
    public async Task A_sessions_own_entry_caps_its_tcp_connections_and_rate_limits_its_http_requests()
    {
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-proc-own-{Guid.NewGuid():N}"[..30];
        await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
        {
            // The defaults stay open (no rate limit, 1000 connections): only the session's own entry limits it.
            ServerArgs = [TcpTunnel.PortRange(), $"--ProxyEntry:Sessions:{session}:MaxTcpConnections=2",
                $"--ProxyEntry:Sessions:{session}:RateLimit:PerSecond=1", $"--ProxyEntry:Sessions:{session}:RateLimit:Burst=3"],
            ClientArgs = ["--tcp", target.Address],
        });
        int port = await PortAsync(stack);

        using Socket first = await EchoingAsync(port);
        using Socket second = await EchoingAsync(port);
        bool thirdCut = await TcpTunnel.IsCutAsync(port, [9], TimeSpan.FromSeconds(15));
        Assert.True(thirdCut, "the third connection should be cut by the session's MaxTcpConnections");
        Assert.Equal(2, target.AcceptedConnections);
        await stack.Server.WaitForOutputAsync(new System.Text.RegularExpressions.Regex("too many connections \\(2 open"), TimeSpan.FromSeconds(10));

        using HttpClient http = CallerHttp.Create();
        var answers = new List<HttpResponseMessage>();
        for (int i = 0; i < 8; i++)
        {
            answers.Add(await http.GetAsync(stack.SessionUrl("/loadtest/ping")));
        }

        HttpResponseMessage? limited = answers.Find(answer => answer.StatusCode == HttpStatusCode.TooManyRequests);
        Assert.True(limited is not null, "8 quick requests over the session's bucket of 3 should meet a 429");
        using var problem = System.Text.Json.JsonDocument.Parse(await limited.Content.ReadAsStringAsync());
        Assert.Contains("ProxyEntry:Sessions:<id>:RateLimit", problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
        Assert.DoesNotContain("deprecated", stack.Server.Output, StringComparison.Ordinal);
        answers.ForEach(answer => answer.Dispose());
    }

    [Fact]
    public async Task The_old_tcp_cap_key_still_caps_a_session_and_warns_naming_the_new_key()
    {
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-proc-old-{Guid.NewGuid():N}"[..30];
        await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
        {
            ServerArgs = [TcpTunnel.PortRange(), "--TunnelServer:Tcp:MaxConnectionsPerSession=1"],
            ClientArgs = ["--tcp", target.Address],
        });
        int port = await PortAsync(stack);

        using Socket first = await EchoingAsync(port);
        bool secondCut = await TcpTunnel.IsCutAsync(port, [9], TimeSpan.FromSeconds(15));

        Assert.True(secondCut, "the second connection should be cut by the old key's cap of 1");
        Assert.Equal(1, target.AcceptedConnections);
        Assert.Contains("TunnelServer:Tcp:MaxConnectionsPerSession is deprecated", stack.Server.Output, StringComparison.Ordinal);
        Assert.Contains("use ProxyEntry:SessionDefaults:MaxTcpConnections (environment variable ProxyEntry__SessionDefaults__MaxTcpConnections)",
            stack.Server.Output, StringComparison.Ordinal);
    }
}
