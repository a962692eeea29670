namespace Tunnel2.TestBackend.Endpoints;

/// <summary>
/// The deterministic content of <c>/loadtest/bytes/{n}</c>: the byte at offset i is <c>(byte)(i % 251)</c>.
/// 251 is prime, so the pattern does not line up with power-of-two buffer or frame sizes and a chunk
/// delivered at the wrong offset, twice or not at all shows up as a mismatch.
/// </summary>
public static class BytePattern
{
    public const int Modulus = 251;

    /// <summary>The expected byte at <paramref name="offset"/> of any /loadtest/bytes response.</summary>
    public static byte At(long offset) => (byte)(offset % Modulus);

    /// <summary>
    /// 256 whole periods (64,256 bytes). Because its length is a multiple of the period, writing it
    /// repeatedly (and a prefix of it last) produces the pattern at every offset.
    /// </summary>
    internal static ReadOnlyMemory<byte> Block { get; } = CreateBlock(Modulus * 256);

    private static byte[] CreateBlock(int length)
    {
        var block = new byte[length];
        for (var i = 0; i < block.Length; i++)
        {
            block[i] = At(i);
        }

        return block;
    }
}
