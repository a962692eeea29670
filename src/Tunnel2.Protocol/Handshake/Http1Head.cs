using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.Protocol.Handshake;

/// <summary>
/// The head of an HTTP/1.1 message as the uplink handshake needs it: the start line and the header fields, read off a
/// pipe up to the blank line, so that whatever follows (frames, a body) stays in the pipe. Both ends of the handshake
/// read with it: the server the client's upgrade request, the client the server's answer.
/// </summary>
public sealed class Http1Head
{
    private static ReadOnlySpan<byte> HeadEnd => "\r\n\r\n"u8;

    private readonly Dictionary<string, string> _headers;

    private Http1Head(string startLine, Dictionary<string, string> headers)
    {
        StartLine = startLine;
        _headers = headers;
    }

    /// <summary>The request line or the status line, without its CRLF.</summary>
    public string StartLine { get; }

    /// <summary>A field's value (repeated fields joined with ", "), or null when absent.</summary>
    public string? this[string name] => _headers.TryGetValue(name, out string? value) ? value : null;

    /// <summary>How many distinct field names the head carries.</summary>
    public int FieldCount => _headers.Count;

    /// <summary>Reads one head, leaving the bytes after its blank line in <paramref name="reader"/>.</summary>
    /// <returns>The head; null when the connection ended before its first byte.</returns>
    /// <exception cref="Http1HeadTooLargeException">No blank line within <paramref name="maxBytes"/>.</exception>
    /// <exception cref="InvalidDataException">The head is not well-formed HTTP/1.1.</exception>
    /// <exception cref="IOException">The connection ended inside the head.</exception>
    public static async ValueTask<Http1Head?> ReadAsync(PipeReader reader, int maxBytes, CancellationToken cancellationToken)
    {
        while (true)
        {
            ReadResult result = await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            ReadOnlySequence<byte> buffer = result.Buffer;
            var sequenceReader = new SequenceReader<byte>(buffer);
            if (sequenceReader.TryReadTo(out ReadOnlySequence<byte> head, HeadEnd, advancePastDelimiter: true))
            {
                if (head.Length + HeadEnd.Length > maxBytes)
                {
                    reader.AdvanceTo(buffer.Start, buffer.End);
                    throw new Http1HeadTooLargeException(maxBytes);
                }

                if (!IsPlausibleHead(head))
                {
                    reader.AdvanceTo(buffer.Start, buffer.End);
                    throw new InvalidDataException("The head contains a control character, a bare LF or a non-ASCII start line.");
                }

                Http1Head parsed = Parse(head);
                reader.AdvanceTo(sequenceReader.Position);
                return parsed;
            }

            // Fail fast on bytes no HTTP head contains, instead of waiting for a blank line that will never come.
            if (!IsPlausibleHead(buffer))
            {
                reader.AdvanceTo(buffer.Start, buffer.End);
                throw new InvalidDataException("The connection does not speak HTTP/1.1.");
            }

            if (buffer.Length >= maxBytes)
            {
                reader.AdvanceTo(buffer.Start, buffer.End);
                throw new Http1HeadTooLargeException(maxBytes);
            }

            if (result.IsCompleted)
            {
                bool empty = buffer.IsEmpty;
                reader.AdvanceTo(buffer.End);
                return empty ? null : throw new IOException("The connection ended inside an HTTP head.");
            }

            reader.AdvanceTo(buffer.Start, buffer.End);
        }
    }

    /// <summary>
    /// Parses a head without its final blank line (already checked by <see cref="IsPlausibleHead"/>): a start line,
    /// then one field per CRLF-terminated line.
    /// </summary>
    /// <exception cref="InvalidDataException">A bare CR, a folded line, or a field line that is not <c>token ":" value</c>.</exception>
    private static Http1Head Parse(in ReadOnlySequence<byte> head)
    {
        if (head.IsSingleSegment)
        {
            return Parse(head.FirstSpan);
        }

        byte[]? rented = null;
        Span<byte> bytes = head.Length <= 4096 ? stackalloc byte[(int)head.Length] : (rented = ArrayPool<byte>.Shared.Rent((int)head.Length)).AsSpan(0, (int)head.Length);
        try
        {
            head.CopyTo(bytes);
            return Parse(bytes);
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    private static Http1Head Parse(ReadOnlySpan<byte> head)
    {
        int lineEnd = head.IndexOf("\r\n"u8);
        ReadOnlySpan<byte> startLine = lineEnd < 0 ? head : head[..lineEnd];
        if (startLine.IsEmpty || startLine.Contains((byte)'\r'))
        {
            throw new InvalidDataException("The head has no start line, or a bare CR in it.");
        }

        var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        ReadOnlySpan<byte> rest = lineEnd < 0 ? [] : head[(lineEnd + 2)..];
        while (!rest.IsEmpty)
        {
            int end = rest.IndexOf("\r\n"u8);
            ReadOnlySpan<byte> line = end < 0 ? rest : rest[..end];
            rest = end < 0 ? [] : rest[(end + 2)..];
            AddField(headers, line);
        }

        return new Http1Head(Encoding.Latin1.GetString(startLine), headers);
    }

    private static void AddField(Dictionary<string, string> headers, ReadOnlySpan<byte> line)
    {
        int colon = line.IndexOf((byte)':');
        if (colon <= 0 || line.Contains((byte)'\r'))
        {
            throw new InvalidDataException("A header line is not 'name: value' (or is folded, or has a bare CR).");
        }

        string name = Encoding.Latin1.GetString(line[..colon]);
        if (!HttpSyntax.IsToken(name))
        {
            throw new InvalidDataException($"The header name '{name}' is not an RFC 9110 token.");
        }

        string value = Encoding.Latin1.GetString(line[(colon + 1)..].Trim(" \t"u8));
        headers[name] = headers.TryGetValue(name, out string? earlier) ? $"{earlier}, {value}" : value;
    }

    /// <summary>
    /// Whether a head, or the start of one, could be HTTP: a start line of printable ASCII, no control characters other
    /// than CR, LF and HTAB after it, and every LF after a CR. Checked on each partial read, so garbage fails at once.
    /// </summary>
    private static bool IsPlausibleHead(in ReadOnlySequence<byte> buffer)
    {
        bool inStartLine = true;
        byte previous = 0;
        foreach (ReadOnlyMemory<byte> segment in buffer)
        {
            foreach (byte b in segment.Span)
            {
                bool control = b < 0x20 && b is not (byte)'\r' and not (byte)'\n' and not (byte)'\t';
                if (control || (b == (byte)'\n' && previous != (byte)'\r') || (inStartLine && b >= 0x7F))
                {
                    return false;
                }

                inStartLine &= b != (byte)'\n';
                previous = b;
            }
        }

        return true;
    }
}

/// <summary>An HTTP head longer than the reader allows.</summary>
public sealed class Http1HeadTooLargeException(int limit)
    : Exception($"The HTTP head exceeds {limit} bytes.")
{
    public int Limit { get; } = limit;
}
