using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Http1;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>
/// The server's answer to the upgrade request: status and headers, read off the connection's pipe so that any frame
/// bytes after the blank line stay in the pipe for the uplink.
/// </summary>
public sealed class HandshakeResponse
{
    private const int MaxHeadBytes = 16 * 1024;
    private const int MaxBodyBytes = 8 * 1024;

    private readonly Http1Head _head;

    private HandshakeResponse(int statusCode, Http1Head head, string body)
    {
        StatusCode = statusCode;
        _head = head;
        Body = body;
    }

    public int StatusCode { get; }

    /// <summary>The error body of a refusal (a problem+json document), empty on 101.</summary>
    public string Body { get; }

    public string? this[string name] => _head[name];

    public static async Task<HandshakeResponse> ReadAsync(PipeReader reader, CancellationToken cancellationToken)
    {
        Http1Head head;
        try
        {
            head = await Http1Head.ReadAsync(reader, MaxHeadBytes, cancellationToken)
                ?? throw new IOException("The server closed the connection during the handshake.");
        }
        catch (Http1HeadTooLargeException)
        {
            throw new InvalidDataException($"The server's handshake answer exceeds {MaxHeadBytes} bytes.");
        }

        int status = ParseStatus(head.StartLine);
        string body = status == 101 ? string.Empty : await ReadBodyAsync(reader, head["Content-Length"], cancellationToken);
        return new HandshakeResponse(status, head, body);
    }

    private static int ParseStatus(string statusLine)
    {
        string[] parts = statusLine.Split(' ', 3);
        if (parts.Length < 2 || !parts[0].StartsWith("HTTP/1.", StringComparison.Ordinal)
            || !int.TryParse(parts[1], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int status))
        {
            throw new InvalidDataException($"The server did not answer with HTTP: '{statusLine}'.");
        }

        return status;
    }

    private static async Task<string> ReadBodyAsync(PipeReader reader, string? lengthText, CancellationToken cancellationToken)
    {
        if (!int.TryParse(lengthText, out int length) || length <= 0)
        {
            return string.Empty;
        }

        length = Math.Min(length, MaxBodyBytes);
        ReadResult result = await reader.ReadAtLeastAsync(length, cancellationToken);
        ReadOnlySequence<byte> body = result.Buffer.Slice(0, Math.Min(length, result.Buffer.Length));
        string text = Encoding.UTF8.GetString(body);
        reader.AdvanceTo(body.End);
        return text;
    }
}
