using System.Net.Sockets;
using System.Text;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>A caller that sends exactly the bytes it is given (HttpClient would normalize dot-segments and refuse odd names).</summary>
public static class RawCaller
{
    public sealed record Answer(int Status, string Head, string Body)
    {
        public bool HasHeader(string line) => Head.Split("\r\n").Contains(line, StringComparer.OrdinalIgnoreCase);
    }

    /// <summary>Sends <paramref name="request"/> (which should say <c>Connection: close</c>) and reads the answer until the server closes.</summary>
    public static async Task<Answer> SendAsync(Uri server, string request, TimeSpan? timeout = null)
    {
        using var cancel = new CancellationTokenSource(timeout ?? TimeSpan.FromSeconds(15));
        using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(server.Host, server.Port, cancel.Token);
        await socket.SendAsync(Encoding.Latin1.GetBytes(request), SocketFlags.None, cancel.Token);
        var received = new MemoryStream();
        byte[] buffer = new byte[16 * 1024];
        while (true)
        {
            int read;
            try
            {
                read = await socket.ReceiveAsync(buffer, SocketFlags.None, cancel.Token);
            }
            catch (SocketException) when (received.Length > 0)
            {
                break; // a reset after the answer (the server closed with unread request bytes)
            }

            if (read == 0)
            {
                break;
            }

            received.Write(buffer, 0, read);
        }

        string text = Encoding.Latin1.GetString(received.ToArray());
        int headEnd = text.IndexOf("\r\n\r\n", StringComparison.Ordinal);
        Assert.True(headEnd > 0, $"no complete response head in '{text}'");
        string head = text[..headEnd];
        int status = int.Parse(head.AsSpan(9, 3), System.Globalization.CultureInfo.InvariantCulture);
        return new Answer(status, head, text[(headEnd + 4)..]);
    }
}
