using System.Net;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A request body of <c>bodyLength</c> bytes where byte i is <c>(i * 7 + seed) % 256</c>, produced on the fly so that a
/// large upload holds nothing. With <c>chunked</c> it declares no length and goes out chunked.
/// </summary>
public sealed class PatternContent(long bodyLength, byte seed = 0, bool chunked = false) : HttpContent
{
    public static byte At(long offset, byte seed) => (byte)((offset * 7) + seed);

    /// <summary>Fills <paramref name="buffer"/> with the pattern's bytes from <paramref name="offset"/> on.</summary>
    public static void Fill(Span<byte> buffer, long offset, byte seed)
    {
        for (int i = 0; i < buffer.Length; i++)
        {
            buffer[i] = At(offset + i, seed);
        }
    }

    protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context)
    {
        byte[] buffer = new byte[64 * 1024];
        long written = 0;
        while (written < bodyLength)
        {
            int count = (int)Math.Min(buffer.Length, bodyLength - written);
            Fill(buffer.AsSpan(0, count), written, seed);
            await stream.WriteAsync(buffer.AsMemory(0, count));
            written += count;
        }
    }

    protected override bool TryComputeLength(out long length)
    {
        length = bodyLength;
        return !chunked;
    }
}
