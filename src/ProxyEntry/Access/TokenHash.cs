using System.Security.Cryptography;
using System.Text;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// A stored token or API key: <c>sha256:</c> and 64 hex digits, the SHA-256 of the secret's UTF-8 bytes. Tokens are
/// long random strings, so a fast hash is enough (a slow one protects guessable passwords, see
/// <see cref="PasswordHash"/>); a leaked credentials file does not reveal them. <c>TunnelServer hash-token</c> makes one.
/// </summary>
public static class TokenHash
{
    public const string Prefix = "sha256:";

    public static string Create(string secret) => Prefix + Convert.ToHexStringLower(Of(secret));

    public static byte[] Of(ReadOnlySpan<char> secret)
    {
        Span<byte> utf8 = secret.Length <= 256 ? stackalloc byte[Encoding.UTF8.GetMaxByteCount(secret.Length)] : new byte[Encoding.UTF8.GetMaxByteCount(secret.Length)];
        int written = Encoding.UTF8.GetBytes(secret, utf8);
        return SHA256.HashData(utf8[..written]);
    }

    public static bool TryParse(string? text, out byte[] hash)
    {
        hash = [];
        if (text is null || !text.StartsWith(Prefix, StringComparison.OrdinalIgnoreCase) || text.Length != Prefix.Length + 64)
        {
            return false;
        }

        try
        {
            hash = Convert.FromHexString(text.AsSpan(Prefix.Length));
            return true;
        }
        catch (FormatException)
        {
            return false;
        }
    }

    /// <summary>
    /// Whether <paramref name="presentedHash"/> is one of <paramref name="stored"/>, compared in constant time and
    /// against every entry (no early exit), so the answer's timing says nothing about which entry came close.
    /// </summary>
    /// <returns>The index of the match, or -1.</returns>
    public static int IndexOf(ReadOnlySpan<byte> presentedHash, IReadOnlyList<byte[]> stored)
    {
        int found = -1;
        for (int i = 0; i < stored.Count; i++)
        {
            if (CryptographicOperations.FixedTimeEquals(presentedHash, stored[i]) && found < 0)
            {
                found = i;
            }
        }

        return found;
    }
}
