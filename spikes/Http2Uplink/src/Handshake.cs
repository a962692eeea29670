using System.Net.Sockets;
using System.Text;

namespace Tunnel2.Spikes.Http2Uplink;

/// <summary>
/// The spike's whole login: the client sends <c>H2SPIKE &lt;session&gt;\r\n</c> on the TCP connection it dialed, the
/// server answers <c>OK\r\n</c>, and from then on the connection is plain HTTP/2 (prior knowledge) with the roles
/// reversed: the server is the HTTP/2 client, the tunnel client is the HTTP/2 server. No token, no version.
/// </summary>
internal static class Handshake
{
    public const string Magic = "H2SPIKE ";
    public const int MaxLine = 256;
    public static readonly byte[] Ok = "OK\r\n"u8.ToArray();

    /// <summary>Reads one CRLF-terminated line byte by byte, so not one byte of HTTP/2 after it is consumed.</summary>
    public static async Task<string?> ReadLineAsync(Socket socket, CancellationToken cancellationToken)
    {
        var buffer = new byte[MaxLine];
        var length = 0;
        while (length < MaxLine)
        {
            var read = await socket.ReceiveAsync(buffer.AsMemory(length, 1), SocketFlags.None, cancellationToken);
            if (read == 0)
            {
                return null;
            }

            length++;
            if (length >= 2 && buffer[length - 2] == '\r' && buffer[length - 1] == '\n')
            {
                return Encoding.ASCII.GetString(buffer, 0, length - 2);
            }
        }

        return null;
    }

    public static bool IsValidSession(string session) =>
        session.Length is > 0 and <= 128
        && session.All(c => char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.' or '~');
}
