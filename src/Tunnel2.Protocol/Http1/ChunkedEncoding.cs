using System.Buffers;
using System.Buffers.Text;

namespace Tunnel2.Protocol.Http1;

/// <summary>Writes HTTP/1.1 chunked framing (RFC 9112 §7.1) around body bytes: a size line, the data, CRLF; a last chunk.</summary>
public static class ChunkedEncoding
{
    /// <summary>The size line of a chunk of <paramref name="length"/> bytes (hex, then CRLF).</summary>
    public static void WriteChunkStart(IBufferWriter<byte> output, long length)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(length);
        Span<byte> span = output.GetSpan(18); // 16 hex digits and CRLF at most
        Utf8Formatter.TryFormat(length, span, out int written, new StandardFormat('X'));
        span[written++] = (byte)'\r';
        span[written++] = (byte)'\n';
        output.Advance(written);
    }

    /// <summary>The CRLF that closes a chunk's data.</summary>
    public static void WriteChunkEnd(IBufferWriter<byte> output) => output.Write("\r\n"u8);

    /// <summary>The zero-size chunk and the empty trailer section that end a chunked body.</summary>
    public static void WriteLastChunk(IBufferWriter<byte> output) => output.Write("0\r\n\r\n"u8);
}
