using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.Protocol.Http1;

/// <summary>
/// The head of an HTTP/1.1 message: the start line and the header fields in the order they came (repeated names kept
/// apart, as several Set-Cookie must be), read up to the blank line so that whatever follows (frames, a body) stays
/// with the reader. The one HTTP/1 head parser of the tunnel: both ends of the uplink handshake read with it, and the
/// client reads its backend's responses with it.
/// </summary>
public sealed class Http1Head
{
    private static ReadOnlySpan<byte> HeadEnd => "\r\n\r\n"u8;

    private readonly List<HeaderField> _fields;

    private Http1Head(string startLine, List<HeaderField> fields)
    {
        StartLine = startLine;
        _fields = fields;
    }

    /// <summary>The request line or the status line, without its CRLF.</summary>
    public string StartLine { get; }

    /// <summary>The header fields in wire order, values without surrounding white space.</summary>
    public List<HeaderField> Fields => _fields;

    /// <summary>A field's value (repeated fields joined with ", "), or null when absent.</summary>
    public string? this[string name]
    {
        get
        {
            string? joined = null;
            foreach (HeaderField field in _fields)
            {
                if (field.Name.Equals(name, StringComparison.OrdinalIgnoreCase))
                {
                    joined = joined is null ? field.Value : $"{joined}, {field.Value}";
                }
            }

            return joined;
        }
    }

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
            Http1Head? head;
            try
            {
                if (TryRead(ref buffer, maxBytes, out head))
                {
                    reader.AdvanceTo(buffer.Start);
                    return head;
                }
            }
            catch (Exception ex) when (ex is InvalidDataException or Http1HeadTooLargeException)
            {
                reader.AdvanceTo(result.Buffer.Start, result.Buffer.End);
                throw;
            }

            if (result.IsCompleted)
            {
                // Measured before AdvanceTo: it resets the segments the sequence points into, and over reset segments a
                // length is meaningless (a cut head of a multiple of 4 KiB looked empty).
                bool nothingLeft = buffer.IsEmpty;
                reader.AdvanceTo(buffer.End);
                return nothingLeft ? null : throw new IOException("The connection ended inside an HTTP head.");
            }

            reader.AdvanceTo(buffer.Start, buffer.End);
        }
    }

    /// <summary>
    /// Parses the head at the start of <paramref name="buffer"/> if it is complete, and slices it off. Bytes no HTTP head
    /// contains fail at once, before any blank line arrives, instead of waiting for one that will never come.
    /// </summary>
    /// <returns>False when the head is not complete yet (<paramref name="buffer"/> is left as it was).</returns>
    /// <exception cref="Http1HeadTooLargeException">No blank line within <paramref name="maxBytes"/>, or a longer head.</exception>
    /// <exception cref="InvalidDataException">The bytes so far are not well-formed HTTP/1.1.</exception>
    public static bool TryRead(ref ReadOnlySequence<byte> buffer, int maxBytes, [NotNullWhen(true)] out Http1Head? head)
    {
        var reader = new SequenceReader<byte>(buffer);
        if (reader.TryReadTo(out ReadOnlySequence<byte> bytes, HeadEnd, advancePastDelimiter: true))
        {
            if (bytes.Length + HeadEnd.Length > maxBytes)
            {
                throw new Http1HeadTooLargeException(maxBytes);
            }

            if (!IsPlausibleHead(bytes))
            {
                throw new InvalidDataException("The head contains a control character or a bare LF.");
            }

            head = Parse(bytes);
            buffer = buffer.Slice(reader.Position);
            return true;
        }

        if (!IsPlausibleHead(buffer))
        {
            throw new InvalidDataException("The connection does not speak HTTP/1.1.");
        }

        if (buffer.Length >= maxBytes)
        {
            throw new Http1HeadTooLargeException(maxBytes);
        }

        head = null;
        return false;
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

        ReadOnlySpan<byte> rest = lineEnd < 0 ? [] : head[(lineEnd + 2)..];
        var fields = new List<HeaderField>(Math.Max(4, rest.Count((byte)'\n') + 1));
        while (!rest.IsEmpty)
        {
            int end = rest.IndexOf("\r\n"u8);
            ReadOnlySpan<byte> line = end < 0 ? rest : rest[..end];
            rest = end < 0 ? [] : rest[(end + 2)..];
            fields.Add(ParseField(line));
        }

        return new Http1Head(Encoding.Latin1.GetString(startLine), fields);
    }

    private static HeaderField ParseField(ReadOnlySpan<byte> line)
    {
        int colon = line.IndexOf((byte)':');
        if (colon <= 0 || line.Contains((byte)'\r'))
        {
            throw new InvalidDataException("A header line is not 'name: value' (or is folded, or has a bare CR).");
        }

        ReadOnlySpan<byte> name = line[..colon];
        if (!HttpSyntax.IsToken(name))
        {
            throw new InvalidDataException($"The header name '{Encoding.Latin1.GetString(name)}' is not an RFC 9110 token.");
        }

        ReadOnlySpan<byte> value = line[(colon + 1)..].Trim(" \t"u8);
        return new HeaderField(KnownHeaderNames.Get(name) ?? Encoding.Latin1.GetString(name), value.IsEmpty ? string.Empty : Encoding.Latin1.GetString(value));
    }

    /// <summary>
    /// Whether a head, or the start of one, could be HTTP: no control characters other than CR, LF and HTAB (and no
    /// DEL), and every LF after a CR. Checked on each partial read, so garbage fails at once.
    /// </summary>
    private static bool IsPlausibleHead(in ReadOnlySequence<byte> buffer)
    {
        byte previous = 0;
        foreach (ReadOnlyMemory<byte> segment in buffer)
        {
            foreach (byte b in segment.Span)
            {
                bool control = (b < 0x20 && b is not (byte)'\r' and not (byte)'\n' and not (byte)'\t') || b == 0x7F;
                if (control || (b == (byte)'\n' && previous != (byte)'\r'))
                {
                    return false;
                }

                previous = b;
            }
        }

        return true;
    }
}
