using System.Net.Sockets;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>The admin API shows a session's public TCP port and the TCP connections open on it.</summary>
public sealed class TcpAdminTests
{
    [Fact]
    public async Task A_TCP_session_is_listed_with_its_port_and_its_open_connections()
    {
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        await using TunnelStack stack = await TcpTunnel.StartStackAsync("--admin-url", "http://127.0.0.1:0");
        Uri admin = stack.Server.Services.GetRequiredService<ServerEndpoints>().AdminUrl!;
        string session = "tcp-admin-" + Guid.NewGuid().ToString("N")[..8];
        int port = await TcpTunnel.StartClientAsync(stack, session, target);
        using Socket first = await TcpTunnel.ConnectAsync(port);
        using Socket second = await TcpTunnel.ConnectAsync(port);
        foreach (Socket socket in new[] { first, second })
        {
            await socket.SendAsync(new byte[] { 1 });
            Assert.Equal(new byte[] { 1 }, await TcpTunnel.ReadAsync(socket, 1).WaitAsync(TimeSpan.FromSeconds(15)));
        }

        using HttpClient http = CallerHttp.Create();
        using (JsonDocument sessions = JsonDocument.Parse(await http.GetStringAsync(new Uri(admin, "/api/sessions"))))
        {
            JsonElement listed = Assert.Single(sessions.RootElement.EnumerateArray(), s => s.GetProperty("id").GetString() == session);
            Assert.Equal(port, listed.GetProperty("tcpPort").GetInt32());
            Assert.Equal(2, listed.GetProperty("tcpConnections").GetInt32());
        }

        first.Close();
        await Eventually.WaitUntilAsync(() => TcpTunnel.OpenConnections(stack, session) == 1, "the server saw the first connection end");
        using (JsonDocument detail = JsonDocument.Parse(await http.GetStringAsync(new Uri(admin, $"/api/sessions/{session}"))))
        {
            Assert.Equal(port, detail.RootElement.GetProperty("tcpPort").GetInt32());
            Assert.Equal(1, detail.RootElement.GetProperty("tcpConnections").GetInt32());
        }
    }

    [Fact]
    public async Task An_HTTP_session_has_no_TCP_port_in_the_admin_API()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--admin-url", "http://127.0.0.1:0");
        Uri admin = stack.Server.Services.GetRequiredService<ServerEndpoints>().AdminUrl!;
        string session = "http-admin-" + Guid.NewGuid().ToString("N")[..8];
        await stack.StartClientAsync(session);
        using HttpClient http = CallerHttp.Create();
        using JsonDocument detail = JsonDocument.Parse(await http.GetStringAsync(new Uri(admin, $"/api/sessions/{session}")));
        Assert.Equal(JsonValueKind.Null, detail.RootElement.GetProperty("tcpPort").ValueKind);
        Assert.Equal(0, detail.RootElement.GetProperty("tcpConnections").GetInt32());
    }
}
