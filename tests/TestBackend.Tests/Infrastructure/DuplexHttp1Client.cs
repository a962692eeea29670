using System.Globalization;
using System.Net.Sockets;
using System.Text;

namespace Tunnel2.TestBackend.Tests.Infrastructure;

/// <summary>
/// One HTTP/1.1 request over a raw socket that sends its body and reads the response at the same time,
/// as curl does. HttpClient cannot be used for a large echo over HTTP/1.1: it only starts reading the
/// response once the whole request body is sent, so a server that streams the body back stalls it as
/// soon as the socket buffers are full.
/// </summary>
internal static class DuplexHttp1Client
{
    public sealed record ResponseHead(int Status, IReadOnlyDictionary<string, string> Headers);

    /// <summary>
    /// Sends <paramref name="content"/> (with Content-Length and <c>Connection: close</c>) to
    /// <paramref name="path"/> and hands the response head and body stream to <paramref name="readResponse"/>
    /// while the upload is still running.
    /// </summary>
    public static async Task<T> PostAsync<T>(
        Uri server, string path, HttpContent content, Func<ResponseHead, Stream, Task<T>> readResponse, CancellationToken cancellationToken)
    {
        using var tcp = new TcpClient();
        await tcp.ConnectAsync(server.Host, server.Port, cancellationToken);
        await using var stream = tcp.GetStream();

        var head = new StringBuilder()
            .Append(CultureInfo.InvariantCulture, $"POST {path} HTTP/1.1\r\n")
            .Append(CultureInfo.InvariantCulture, $"Host: {server.Authority}\r\n")
            .Append(CultureInfo.InvariantCulture, $"Content-Type: {content.Headers.ContentType}\r\n")
            .Append(CultureInfo.InvariantCulture, $"Content-Length: {content.Headers.ContentLength}\r\n")
            .Append("Connection: close\r\n\r\n")
            .ToString();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(head), cancellationToken);

        var upload = content.CopyToAsync(stream, cancellationToken);
        var responseHead = await ReadHeadAsync(stream, cancellationToken);
        var result = await readResponse(responseHead, stream);
        await upload;
        return result;
    }

    // Byte by byte so that nothing of the body is consumed; the head is a couple of hundred bytes.
    private static async Task<ResponseHead> ReadHeadAsync(Stream stream, CancellationToken cancellationToken)
    {
        var bytes = new List<byte>(256);
        var one = new byte[1];
        while (bytes.Count < 4 || !(bytes[^4] == '\r' && bytes[^3] == '\n' && bytes[^2] == '\r' && bytes[^1] == '\n'))
        {
            await stream.ReadExactlyAsync(one, cancellationToken);
            bytes.Add(one[0]);
            if (bytes.Count > 16 * 1024)
            {
                throw new InvalidDataException("Response head longer than 16 KiB.");
            }
        }

        var lines = Encoding.ASCII.GetString(bytes.ToArray()).Split("\r\n", StringSplitOptions.RemoveEmptyEntries);
        var status = int.Parse(lines[0].Split(' ')[1], CultureInfo.InvariantCulture);
        var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (var line in lines.Skip(1))
        {
            var colon = line.IndexOf(':', StringComparison.Ordinal);
            headers[line[..colon].Trim()] = line[(colon + 1)..].Trim();
        }

        return new ResponseHead(status, headers);
    }
}
