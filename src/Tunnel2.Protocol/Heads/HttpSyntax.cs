using System.Buffers;

namespace Tunnel2.Protocol.Heads;

/// <summary>
/// The character classes of HTTP/1.1 field syntax that decide whether a header can be written to a connection without
/// changing how the next hop frames the message (RFC 9110 §5.1, §5.5 and §5.6.2). Both ends use them: the public edge
/// refuses a request that breaks them, and the client's writer refuses to write one (defence in depth).
/// </summary>
public static class HttpSyntax
{
    /// <summary>tchar: <c>!#$%&amp;'*+-.^_`|~</c>, digits and letters (RFC 9110 §5.6.2).</summary>
    private static readonly SearchValues<char> TokenChars =
        SearchValues.Create("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");

    /// <summary>The same tchar set, as bytes off the wire.</summary>
    private static readonly SearchValues<byte> TokenBytes =
        SearchValues.Create("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"u8);

    /// <summary>Bytes that end or split a header line on the wire, and so never belong in a field value.</summary>
    private static readonly SearchValues<char> LineBreakers = SearchValues.Create("\r\n\0");

    /// <summary>A field name is a non-empty token: no controls, no white space, no separators, nothing above 0x7E.</summary>
    public static bool IsToken(ReadOnlySpan<char> name) => !name.IsEmpty && !name.ContainsAnyExcept(TokenChars);

    /// <inheritdoc cref="IsToken(ReadOnlySpan{char})"/>
    public static bool IsToken(ReadOnlySpan<byte> name) => !name.IsEmpty && !name.ContainsAnyExcept(TokenBytes);

    /// <summary>False when the value holds CR, LF or NUL, which would start a new line or end the head early.</summary>
    public static bool IsSafeFieldValue(ReadOnlySpan<char> value) => !value.ContainsAny(LineBreakers);

    /// <summary>
    /// Whether a comma-separated field such as <c>Connection: keep-alive, Upgrade</c> lists <paramref name="token"/>,
    /// ignoring case and the white space around each element (RFC 9110 §5.6.1); false for a missing field.
    /// </summary>
    public static bool ListsToken(string? list, string token)
    {
        if (list is null)
        {
            return false;
        }

        foreach (Range part in list.AsSpan().Split(','))
        {
            if (list.AsSpan()[part].Trim().Equals(token, StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        return false;
    }
}
