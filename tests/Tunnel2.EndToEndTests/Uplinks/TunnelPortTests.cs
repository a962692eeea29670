using System.Net;
using System.Net.Sockets;
using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Uplinks;

/// <summary>
/// The tunnel port's own listener: a slow or oversized upgrade request gets a defined status and a closed connection,
/// and neither stops the uplinks already served.
/// </summary>
public sealed class TunnelPortTests
{
    [Fact]
    public async Task An_upgrade_request_not_finished_within_the_handshake_timeout_gets_408_and_the_connection_closes()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--TunnelServer:Limits:HandshakeTimeout=00:00:00.500");
        await using TunnelClientHandle client = await stack.StartClientAsync("served-beside");
        using var socket = await ConnectAsync(stack.TunnelUrl);
        await socket.SendAsync(Encoding.ASCII.GetBytes("GET /tunnel2/connect HTTP/1.1\r\nHost: t\r\nUpgr"), SocketFlags.None);

        string answer = await ReadToEndAsync(socket);

        Assert.StartsWith("HTTP/1.1 408", answer, StringComparison.Ordinal);
        Assert.Contains("urn:tunnel2:problem:handshake-timeout", answer, StringComparison.Ordinal);
        using HttpClient http = CallerHttp.Create();
        Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(stack.SessionUrl("served-beside", "/loadtest/ping"))).StatusCode);
    }

    [Fact]
    public async Task A_crowd_of_300_stalled_handshakes_does_not_keep_a_client_from_logging_in_and_each_gets_408()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--TunnelServer:Limits:HandshakeTimeout=00:00:03");
        var stalled = new List<Socket>();
        try
        {
            for (int i = 0; i < 300; i++)
            {
                Socket socket = await ConnectAsync(stack.TunnelUrl);
                stalled.Add(socket);
                await socket.SendAsync(Encoding.ASCII.GetBytes("GET /tunnel2/connect HTTP/1.1\r\nHost: t\r\n"), SocketFlags.None);
            }

            // While all 300 wait for their timeout, a real client logs in and its session serves requests.
            await using TunnelClientHandle client = await stack.StartClientAsync("beside-the-crowd");
            using HttpClient http = CallerHttp.Create();
            Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(stack.SessionUrl("beside-the-crowd", "/loadtest/ping"))).StatusCode);
            Assert.All(stalled, socket => Assert.False(socket.Poll(0, SelectMode.SelectRead), "a stalled handshake was answered before the client logged in"));

            string[] answers = await Task.WhenAll(stalled.Select(ReadToEndAsync));
            Assert.All(answers, answer => Assert.StartsWith("HTTP/1.1 408", answer, StringComparison.Ordinal));
            Assert.Single(stack.Registry.GetAllUplinks());
        }
        finally
        {
            stalled.ForEach(socket => socket.Dispose());
        }
    }

    [Fact]
    public async Task An_upgrade_request_over_32_KiB_gets_431_and_the_connection_closes()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        using var socket = await ConnectAsync(stack.TunnelUrl);
        string filler = string.Concat(Enumerable.Repeat($"X-Filler: {new string('a', 1000)}\r\n", 40));
        await socket.SendAsync(Encoding.ASCII.GetBytes($"GET /tunnel2/connect HTTP/1.1\r\nHost: t\r\n{filler}\r\n"), SocketFlags.None);

        string answer = await ReadToEndAsync(socket);

        Assert.StartsWith("HTTP/1.1 431", answer, StringComparison.Ordinal);
        Assert.Contains("application/problem+json", answer, StringComparison.Ordinal);
        Assert.Empty(stack.Registry.GetAllUplinks());
    }

    private static async Task<Socket> ConnectAsync(Uri url)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(url.Host, url.Port);
        return socket;
    }

    /// <summary>Everything the server sends until it closes; fails when it does not close within 10 s.</summary>
    private static async Task<string> ReadToEndAsync(Socket socket)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var received = new StringBuilder();
        byte[] buffer = new byte[4096];
        while (true)
        {
            int read;
            try
            {
                read = await socket.ReceiveAsync(buffer, SocketFlags.None, timeout.Token);
            }
            catch (SocketException) when (received.Length > 0)
            {
                break; // reset after the answer
            }

            if (read == 0)
            {
                break;
            }

            received.Append(Encoding.Latin1.GetString(buffer, 0, read));
        }

        return received.ToString();
    }
}
