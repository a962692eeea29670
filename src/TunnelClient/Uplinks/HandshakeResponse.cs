using System.Buffers;
using System.IO.Pipelines;
using System.Text;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>
/// The server's answer to the upgrade request: status and headers, read off the connection's pipe so that any frame
/// bytes after the blank line stay in the pipe for the uplink.
/// </summary>
public sealed class HandshakeResponse
{
    private const int MaxHeadBytes = 16 * 1024;
    private const int MaxBodyBytes = 8 * 1024;
    private static ReadOnlySpan<byte> HeadEnd => "\r\n\r\n"u8;

    private HandshakeResponse(int statusCode, Dictionary<string, string> headers, string body)
    {
        StatusCode = statusCode;
        Headers = headers;
        Body = body;
    }

    public int StatusCode { get; }

    public Dictionary<string, string> Headers { get; }

    /// <summary>The error body of a refusal (a problem+json document), empty on 101.</summary>
    public string Body { get; }

    public string? this[string name] => Headers.TryGetValue(name, out string? value) ? value : null;

    public static async Task<HandshakeResponse> ReadAsync(PipeReader reader, CancellationToken cancellationToken)
    {
        while (true)
        {
            ReadResult result = await reader.ReadAsync(cancellationToken);
            ReadOnlySequence<byte> buffer = result.Buffer;
            var sequenceReader = new SequenceReader<byte>(buffer);
            if (sequenceReader.TryReadTo(out ReadOnlySequence<byte> head, HeadEnd, advancePastDelimiter: true))
            {
                (int status, Dictionary<string, string> headers) = ParseHead(Encoding.Latin1.GetString(head));
                reader.AdvanceTo(sequenceReader.Position);
                string body = status == 101 ? string.Empty : await ReadBodyAsync(reader, headers, cancellationToken);
                return new HandshakeResponse(status, headers, body);
            }

            if (buffer.Length > MaxHeadBytes)
            {
                throw new InvalidDataException($"The server's handshake answer exceeds {MaxHeadBytes} bytes.");
            }

            if (result.IsCompleted)
            {
                throw new IOException("The server closed the connection during the handshake.");
            }

            reader.AdvanceTo(buffer.Start, buffer.End);
        }
    }

    private static (int Status, Dictionary<string, string> Headers) ParseHead(string head)
    {
        string[] lines = head.Split("\r\n");
        string[] statusLine = lines[0].Split(' ', 3);
        if (statusLine.Length < 2 || !statusLine[0].StartsWith("HTTP/1.", StringComparison.Ordinal)
            || !int.TryParse(statusLine[1], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int status))
        {
            throw new InvalidDataException($"The server did not answer with HTTP: '{lines[0]}'.");
        }

        var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        for (int i = 1; i < lines.Length; i++)
        {
            int colon = lines[i].IndexOf(':', StringComparison.Ordinal);
            if (colon > 0)
            {
                headers[lines[i][..colon].Trim()] = lines[i][(colon + 1)..].Trim();
            }
        }

        return (status, headers);
    }

    private static async Task<string> ReadBodyAsync(PipeReader reader, Dictionary<string, string> headers, CancellationToken cancellationToken)
    {
        if (!headers.TryGetValue("Content-Length", out string? lengthText) || !int.TryParse(lengthText, out int length) || length <= 0)
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
