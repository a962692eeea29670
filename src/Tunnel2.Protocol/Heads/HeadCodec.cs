using System.Buffers;
using System.Buffers.Binary;
using System.Text;
using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Heads;

/// <summary>
/// Binary encoding of request and response heads (see docs/protocol.md): strings are a LEB128 length followed by UTF-8
/// bytes; no JSON, no text parsing.
/// </summary>
public static class HeadCodec
{
    /// <summary>Upper bound on the fields of one head; more is a protocol error rather than an allocation storm.</summary>
    public const int MaxHeaderCount = 1024;

    private static readonly UTF8Encoding Utf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: false);

    public static void WriteRequestHead(IBufferWriter<byte> writer, RequestHead head)
    {
        WriteString(writer, head.Method);
        WriteString(writer, head.Target);
        WriteHeaders(writer, head.Headers);
    }

    public static void WriteResponseHead(IBufferWriter<byte> writer, ResponseHead head)
    {
        Span<byte> status = writer.GetSpan(2);
        BinaryPrimitives.WriteUInt16BigEndian(status, (ushort)head.StatusCode);
        writer.Advance(2);
        WriteHeaders(writer, head.Headers);
    }

    /// <exception cref="ProtocolViolationException">The payload is not a well-formed request head.</exception>
    public static RequestHead ReadRequestHead(ReadOnlySequence<byte> payload)
    {
        var reader = new SequenceReader<byte>(payload);
        string method = ReadMethod(ref reader);
        string target = ReadString(ref reader);
        if (target.Length == 0 || target[0] != '/')
        {
            throw new ProtocolViolationException("Request target must start with '/'.");
        }

        List<HeaderField> headers = ReadHeaders(ref reader);
        EnsureConsumed(ref reader);
        return new RequestHead(method, target, headers);
    }

    /// <exception cref="ProtocolViolationException">The payload is not a well-formed response head.</exception>
    public static ResponseHead ReadResponseHead(ReadOnlySequence<byte> payload)
    {
        var reader = new SequenceReader<byte>(payload);
        if (!reader.TryReadBigEndian(out short rawStatus))
        {
            throw new ProtocolViolationException("Response head is truncated.");
        }

        int status = (ushort)rawStatus;
        if (status is < 100 or > 999)
        {
            throw new ProtocolViolationException($"Invalid status code {status}.");
        }

        List<HeaderField> headers = ReadHeaders(ref reader);
        EnsureConsumed(ref reader);
        return new ResponseHead(status, headers);
    }

    private static void WriteHeaders(IBufferWriter<byte> writer, List<HeaderField> headers)
    {
        WriteVarUInt(writer, (uint)headers.Count);
        foreach (HeaderField field in headers)
        {
            WriteString(writer, field.Name);
            WriteString(writer, field.Value);
        }
    }

    private static void WriteString(IBufferWriter<byte> writer, string value)
    {
        int byteCount = Utf8.GetByteCount(value);
        WriteVarUInt(writer, (uint)byteCount);
        if (byteCount == 0)
        {
            return;
        }

        Span<byte> span = writer.GetSpan(byteCount);
        int written = Utf8.GetBytes(value, span);
        writer.Advance(written);
    }

    internal static void WriteVarUInt(IBufferWriter<byte> writer, uint value)
    {
        Span<byte> span = writer.GetSpan(5);
        int i = 0;
        while (value >= 0x80)
        {
            span[i++] = (byte)(value | 0x80);
            value >>= 7;
        }

        span[i++] = (byte)value;
        writer.Advance(i);
    }

    internal static uint ReadVarUInt(ref SequenceReader<byte> reader)
    {
        uint result = 0;
        for (int shift = 0; shift < 35; shift += 7)
        {
            if (!reader.TryRead(out byte b))
            {
                throw new ProtocolViolationException("Head is truncated inside a length.");
            }

            if (shift == 28 && b > 0x0F)
            {
                throw new ProtocolViolationException("Length does not fit in 32 bits.");
            }

            result |= (uint)(b & 0x7F) << shift;
            if (b < 0x80)
            {
                return result;
            }
        }

        throw new ProtocolViolationException("Length does not fit in 32 bits.");
    }

    private static List<HeaderField> ReadHeaders(ref SequenceReader<byte> reader)
    {
        uint count = ReadVarUInt(ref reader);
        if (count > MaxHeaderCount)
        {
            throw new ProtocolViolationException($"Head has {count} header fields; at most {MaxHeaderCount} are allowed.");
        }

        var headers = new List<HeaderField>((int)count);
        for (int i = 0; i < count; i++)
        {
            string name = ReadString(ref reader);
            if (name.Length == 0)
            {
                throw new ProtocolViolationException("Header name is empty.");
            }

            headers.Add(new HeaderField(name, ReadString(ref reader)));
        }

        return headers;
    }

    private static string ReadMethod(ref SequenceReader<byte> reader)
    {
        uint length = ReadVarUInt(ref reader);
        if (length == 0 || length > 32 || reader.Remaining < length)
        {
            throw new ProtocolViolationException("Request method is empty, too long or truncated.");
        }

        ReadOnlySpan<byte> span = reader.UnreadSpan;
        if (span.Length >= length)
        {
            string? known = KnownMethod(span[..(int)length]);
            if (known is not null)
            {
                reader.Advance(length);
                return known;
            }
        }

        // A method is a token (RFC 9110 §9.1). Anything else is refused here, where it arrives, instead of being decoded
        // with replacement characters into a method the writer would encode as more than 32 bytes (found by fuzzing).
        string method = ReadStringBody(ref reader, length);
        return HttpSyntax.IsToken(method) ? method : throw new ProtocolViolationException("Request method is not a token.");
    }

    private static string? KnownMethod(ReadOnlySpan<byte> method) => method switch
    {
        _ when method.SequenceEqual("GET"u8) => "GET",
        _ when method.SequenceEqual("POST"u8) => "POST",
        _ when method.SequenceEqual("PUT"u8) => "PUT",
        _ when method.SequenceEqual("DELETE"u8) => "DELETE",
        _ when method.SequenceEqual("HEAD"u8) => "HEAD",
        _ when method.SequenceEqual("PATCH"u8) => "PATCH",
        _ when method.SequenceEqual("OPTIONS"u8) => "OPTIONS",
        _ => null,
    };

    private static string ReadString(ref SequenceReader<byte> reader)
    {
        uint length = ReadVarUInt(ref reader);
        if (reader.Remaining < length)
        {
            throw new ProtocolViolationException("Head is truncated inside a string.");
        }

        return length == 0 ? string.Empty : ReadStringBody(ref reader, length);
    }

    private static string ReadStringBody(ref SequenceReader<byte> reader, uint length)
    {
        ReadOnlySpan<byte> span = reader.UnreadSpan;
        string value;
        if (span.Length >= length)
        {
            value = Utf8.GetString(span[..(int)length]);
        }
        else
        {
            value = Utf8.GetString(reader.UnreadSequence.Slice(0, length));
        }

        reader.Advance(length);
        return value;
    }

    private static void EnsureConsumed(ref SequenceReader<byte> reader)
    {
        if (!reader.End)
        {
            throw new ProtocolViolationException($"Head has {reader.Remaining} unexpected trailing bytes.");
        }
    }
}
