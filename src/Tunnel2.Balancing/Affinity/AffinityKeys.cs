using System.Globalization;
using System.IO.Hashing;
using System.Runtime.InteropServices;

namespace Tunnel2.Balancing.Affinity;

/// <summary>
/// The one affinity-key format of both sides: a member's key is a stable hash of its identity (a client's instance id,
/// a backend's origin), and what a cookie holds to name it is that hash in 16 hex digits, which reveals nothing.
/// Header and client-address affinity hash the request's value with the same function for rendezvous hashing.
/// </summary>
public static class AffinityKeys
{
    public static ulong Hash(ReadOnlySpan<char> value) => XxHash3.HashToUInt64(MemoryMarshal.AsBytes(value));

    /// <summary>A member's cookie value: its key hash in 16 hex digits.</summary>
    public static string CookieValue(ulong keyHash) => keyHash.ToString("x16", CultureInfo.InvariantCulture);
}
