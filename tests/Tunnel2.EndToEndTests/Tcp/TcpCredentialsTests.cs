using System.Net.Sockets;
using Tunnel2.EndToEndTests.Access;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// A TCP session as the credentials file sets it up, with no port range at all: a fixed port per session (TcpPorts), and
/// the file's visitor rules for the session applied to every TCP caller before anything reaches the client.
/// </summary>
public sealed class TcpCredentialsTests
{
    [Fact]
    public async Task Fixed_ports_from_the_file_and_its_address_and_credential_rules_apply_to_tcp_callers()
    {
        string open = "tcp-file-open-" + Guid.NewGuid().ToString("N")[..8];
        string denied = "tcp-file-deny-" + Guid.NewGuid().ToString("N")[..8];
        string keyed = "tcp-file-key-" + Guid.NewGuid().ToString("N")[..8];
        int[] ports = [CommandLineTool.FreeLoopbackPort(), CommandLineTool.FreeLoopbackPort(), CommandLineTool.FreeLoopbackPort()];
        string path = Path.Combine(Path.GetTempPath(), $"tunnel2-tcp-credentials-{Guid.NewGuid():N}.json");
        await File.WriteAllTextAsync(path, $$"""
            {
              "Clients": [ {{CredentialsFileTests.Client("tcp", TunnelStack.Token, "tcp-file-*")}} ],
              "Visitors": [
                { "Sessions": "{{denied}}", "Deny": [ "127.0.0.0/8" ] },
                { "Sessions": "{{keyed}}", "ApiKeys": [ "{{TokenHash.Create("visitor-api-key-0123456789")}}" ] }
              ],
              "TcpPorts": { "{{open}}": {{ports[0]}}, "{{denied}}": {{ports[1]}}, "{{keyed}}": {{ports[2]}} }
            }
            """);
        try
        {
            await using TunnelStack stack = await TunnelStack.StartAsync($"--TunnelServer:CredentialsFile={path}", TcpTunnel.TcpLogs);
            await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
            foreach (string session in new[] { open, denied, keyed })
            {
                await stack.StartClientAsync(session, backend: null, token: null, maxConcurrency: 100, "--tcp", target.Address);
            }

            Assert.Equal([ports[0], ports[1], ports[2]], new[] { open, denied, keyed }.Select(session => TcpTunnel.PortOf(stack, session)));
            using (Socket caller = await TcpTunnel.ConnectAsync(ports[0]))
            {
                await caller.SendAsync("ok"u8.ToArray());
                Assert.Equal("ok"u8.ToArray(), await TcpTunnel.ReadAsync(caller, 2));
            }

            Assert.True(await TcpTunnel.IsCutAsync(ports[1], [1], TimeSpan.FromSeconds(15)), "a caller the file denies should be cut");
            Assert.True(await TcpTunnel.IsCutAsync(ports[2], [1], TimeSpan.FromSeconds(15)), "a session that wants an API key takes no TCP caller");
            await Eventually.WaitUntilAsync(() => TcpTunnel.Logged(denied, "address-denied") && TcpTunnel.Logged(keyed, "credentials-required"),
                "both refusals are logged");
            Assert.Equal(1, target.AcceptedConnections); // only the open session's caller reached the target
        }
        finally
        {
            File.Delete(path);
        }
    }
}
