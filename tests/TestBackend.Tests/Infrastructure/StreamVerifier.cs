namespace Tunnel2.TestBackend.Tests.Infrastructure;

/// <summary>Reads a response body to its end, comparing each chunk with the expected bytes as it arrives.</summary>
internal static class StreamVerifier
{
    /// <summary>Fills the span with the bytes expected at the given offset.</summary>
    public delegate void ExpectedBytes(long offset, Span<byte> destination);

    /// <returns>The number of bytes read; fails the test at the first byte that differs.</returns>
    public static async Task<long> VerifyAsync(
        Stream body, ExpectedBytes expected, Action<long>? progress, CancellationToken cancellationToken)
    {
        var received = new byte[64 * 1024];
        var wanted = new byte[received.Length];
        long offset = 0;
        int read;
        while ((read = await body.ReadAsync(received.AsMemory(), cancellationToken)) > 0)
        {
            expected(offset, wanted.AsSpan(0, read));
            var actual = received.AsSpan(0, read);
            if (!actual.SequenceEqual(wanted.AsSpan(0, read)))
            {
                var at = actual.CommonPrefixLength(wanted.AsSpan(0, read));
                Assert.Fail($"Byte {offset + at} is {actual[at]}, expected {wanted[at]}.");
            }

            offset += read;
            progress?.Invoke(offset);
        }

        return offset;
    }

    public static void BytePattern(long offset, Span<byte> destination)
    {
        for (var i = 0; i < destination.Length; i++)
        {
            destination[i] = Endpoints.BytePattern.At(offset + i);
        }
    }
}
