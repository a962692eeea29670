using System.Net;
using System.Net.Sockets;
using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.HostileInput;

/// <summary>
/// Slowloris: connections that send their head a byte at a time. On the public port Kestrel's RequestHeadersTimeout
/// closes them; on the tunnel port HandshakeTimeout does. Meanwhile other callers are served and a real client logs in.
/// Each test runs its own stack with a short timeout; the only timing assertions are generous upper bounds.
/// </summary>
[Collection(TunnelCollection.Name)]
public sealed class SlowlorisTests
{
    private static readonly TimeSpan Drip = TimeSpan.FromMilliseconds(250);

    [Fact]
    public async Task Slow_heads_on_the_public_port_are_closed_by_RequestHeadersTimeout_while_probes_are_served()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--TunnelServer:Limits:RequestHeadersTimeout=00:00:02");
        string session = "slowloris-" + Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = await stack.StartClientAsync(session);
        string head = $"GET /session/{session}/loadtest/ping HTTP/1.1\r\nHost: x\r\nX-Slow: " + new string('s', 400);
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        List<Task<Dripped>> slow = [.. Enumerable.Range(0, 200).Select(_ => DripAsync(stack.PublicUrl, head, stop.Token))];

        // While they drip, ordinary callers are answered promptly.
        using var http = CallerHttp.Create();
        http.Timeout = TimeSpan.FromSeconds(5);
        for (int i = 0; i < 20; i++)
        {
            using HttpResponseMessage probe = await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"));
            Assert.Equal(HttpStatusCode.OK, probe.StatusCode);
        }

        Dripped[] dripped = await Task.WhenAll(slow).WaitAsync(TimeSpan.FromSeconds(25));

        // Every slow connection was closed by the server (none by our own deadline), after a 408 or without a word.
        Assert.All(dripped, d => Assert.True(d.ClosedByServer, $"still open after {d.Sent} bytes"));
        Assert.All(dripped, d => Assert.True(d.Answer.Length == 0 || d.Answer.StartsWith("HTTP/1.1 408", StringComparison.Ordinal), d.Answer));
        Assert.All(dripped, d => Assert.True(d.Sent < head.Length, "a slow head was sent whole"));
        Assert.Equal(20, client.Status.RequestsRelayed);
    }

    [Fact]
    public async Task Slow_upgrade_requests_on_the_tunnel_port_are_closed_by_HandshakeTimeout_while_a_client_logs_in()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--TunnelServer:Limits:HandshakeTimeout=00:00:01");
        string session = "slow-login-" + Guid.NewGuid().ToString("N");
        string head = "GET /tunnel2/connect HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: tunnel2\r\n"
            + $"Authorization: Bearer {TunnelStack.Token}\r\nTunnel2-Session: {session}\r\nTunnel2-Version: 4\r\n\r\n";
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        List<Task<Dripped>> slow = [.. Enumerable.Range(0, 50).Select(_ => DripAsync(stack.TunnelUrl, head, stop.Token))];

        string real = "real-" + Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = await stack.StartClientAsync(real);
        using var http = CallerHttp.Create();
        using HttpResponseMessage probe = await http.GetAsync(stack.SessionUrl(real, "/loadtest/ping"));
        Assert.Equal(HttpStatusCode.OK, probe.StatusCode);

        Dripped[] dripped = await Task.WhenAll(slow).WaitAsync(TimeSpan.FromSeconds(25));

        Assert.All(dripped, d => Assert.True(d.ClosedByServer, $"still open after {d.Sent} bytes"));
        Assert.All(dripped, d => Assert.True(d.Sent < head.Length, "a slow upgrade request was sent whole"));
        Assert.Empty(stack.Registry.GetUplinks(session));
        Assert.Single(stack.Registry.GetUplinks(real));
        Assert.True(client.Status.IsConnected);
    }

    /// <summary>What one slow connection saw: whether the server closed it, how much it sent, what it was answered.</summary>
    private sealed record Dripped(bool ClosedByServer, int Sent, string Answer);

    /// <summary>Sends <paramref name="head"/> one byte per <see cref="Drip"/> until the server closes the connection.</summary>
    private static async Task<Dripped> DripAsync(Uri server, string head, CancellationToken stop)
    {
        using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(server.Host, server.Port, stop);
        byte[] bytes = Encoding.ASCII.GetBytes(head);
        var answer = new MemoryStream();
        Task<bool> closed = ReadUntilClosedAsync(socket, answer, stop);
        int sent = 0;
        try
        {
            while (sent < bytes.Length && !closed.IsCompleted)
            {
                await socket.SendAsync(bytes.AsMemory(sent, 1), SocketFlags.None, stop);
                sent++;
                await Task.WhenAny(closed, Task.Delay(Drip, stop));
            }
        }
        catch (SocketException)
        {
            // A send after the server closed: the close is what the read below reports.
        }
        catch (OperationCanceledException)
        {
            // Our own deadline: reported as not closed by the server.
        }

        bool byServer = await closed;
        return new Dripped(byServer, sent, Encoding.ASCII.GetString(answer.ToArray()));
    }

    /// <summary>True when the server ends the connection (FIN or reset); false when <paramref name="stop"/> came first.</summary>
    private static async Task<bool> ReadUntilClosedAsync(Socket socket, MemoryStream answer, CancellationToken stop)
    {
        byte[] buffer = new byte[1024];
        try
        {
            while (true)
            {
                int read = await socket.ReceiveAsync(buffer, SocketFlags.None, stop);
                if (read == 0)
                {
                    return true;
                }

                answer.Write(buffer, 0, read);
            }
        }
        catch (SocketException)
        {
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }
}
