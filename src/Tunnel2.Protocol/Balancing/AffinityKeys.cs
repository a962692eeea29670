using System.Globalization;
using System.IO.Hashing;
using System.Runtime.InteropServices;

namespace Tunnel2.Protocol.Balancing;

/// <summary>The hashes affinity works with: of a member's identity, and of a request's header value or address.</summary>
public static class AffinityKeys
{
    public static ulong Hash(ReadOnlySpan<char> value) => XxHash3.HashToUInt64(MemoryMarshal.AsBytes(value));

    /// <summary>A member's cookie value: its key hash in 16 hex digits.</summary>
    public static string CookieValue(ulong keyHash) => keyHash.ToString("x16", CultureInfo.InvariantCulture);
}
