using System.Security.Cryptography;
using System.Text;

namespace Tunnel2.TunnelServer.Uplinks.Handshake;

/// <summary>The two rules of RFC 6455 about the client's key: its shape (§4.1) and the server's answer to it (§4.2.2).</summary>
public static class WebSocketKeys
{
    /// <summary>Whether <paramref name="key"/> is 16 bytes in base64, as <c>Sec-WebSocket-Key</c> must be.</summary>
    public static bool IsValid(string? key)
    {
        Span<byte> decoded = stackalloc byte[24];
        return key is { Length: 24 } && Convert.TryFromBase64String(key, decoded, out int written) && written == 16;
    }

    /// <summary>The <c>Sec-WebSocket-Accept</c> answer to a key (RFC 6455 §4.2.2).</summary>
    public static string Accept(string key)
    {
        Span<byte> hash = stackalloc byte[SHA1.HashSizeInBytes];
#pragma warning disable CA5350 // RFC 6455 fixes SHA-1 here; it proves the server read the key, it protects nothing
        SHA1.HashData(Encoding.ASCII.GetBytes(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"), hash);
#pragma warning restore CA5350
        return Convert.ToBase64String(hash);
    }
}
