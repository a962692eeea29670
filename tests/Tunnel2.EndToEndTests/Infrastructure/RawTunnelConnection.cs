using System.Net.Sockets;
using System.Text;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>A plain TCP connection to the tunnel port, for speaking the handshake (or garbage) by hand.</summary>
public sealed class RawTunnelConnection : IDisposable
{
    private RawTunnelConnection(Socket socket)
    {
        Socket = socket;
        Stream = new NetworkStream(socket, ownsSocket: false);
    }

    public Socket Socket { get; }

    public NetworkStream Stream { get; }

    /// <param name="from">A loopback address to connect from (127.0.0.2, …), to be another source address; null: any.</param>
    public static async Task<RawTunnelConnection> OpenAsync(Uri url, System.Net.IPAddress? from = null)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        if (from is not null)
        {
            socket.Bind(new System.Net.IPEndPoint(from, 0));
        }

        await socket.ConnectAsync(url.Host, url.Port);
        return new RawTunnelConnection(socket);
    }

    /// <summary>Sends the upgrade request and returns the answer's head (and any body read with it).</summary>
    public async Task<string> HandshakeAsync(string authorizationLine, string session, string version = "3")
    {
        string request = $"GET /tunnel2/connect HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: tunnel2\r\n{authorizationLine}Tunnel2-Session: {session}\r\nTunnel2-Version: {version}\r\n\r\n";
        await Stream.WriteAsync(Encoding.ASCII.GetBytes(request));
        var answer = new StringBuilder();
        byte[] buffer = new byte[1];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        while (!answer.ToString().Contains("\r\n\r\n", StringComparison.Ordinal))
        {
            if (await Stream.ReadAsync(buffer, timeout.Token) == 0)
            {
                break;
            }

            answer.Append((char)buffer[0]);
        }

        if (!answer.ToString().StartsWith("HTTP/1.1 101", StringComparison.Ordinal))
        {
            byte[] rest = new byte[4096];
            int read = await Stream.ReadAsync(rest, timeout.Token);
            answer.Append(Encoding.UTF8.GetString(rest, 0, read));
        }

        return answer.ToString();
    }

    /// <summary>True when the server closes (or resets) the connection within the timeout.</summary>
    public async Task<bool> ReadsToEndAsync()
    {
        byte[] buffer = new byte[8192];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        try
        {
            while (await Stream.ReadAsync(buffer, timeout.Token) > 0)
            {
                // Drain whatever the server says (a 400 answer, a GoAway frame) until it closes.
            }

            return true;
        }
        catch (IOException)
        {
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    public void Dispose()
    {
        Stream.Dispose();
        Socket.Dispose();
    }
}
