using System.IO.Enumeration;
using Tunnel2.Protocol.Handshake;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// A session id, or a pattern of them: <c>*</c> stands for any run of characters (none too), <c>?</c> for exactly one.
/// <c>team-a-*</c> matches <c>team-a-web</c> and <c>team-a-</c>; <c>*</c> matches every session.
/// </summary>
public sealed class SessionPattern
{
    /// <summary><c>*</c>: every session.</summary>
    public static readonly SessionPattern Any = new("*");

    private SessionPattern(string text)
    {
        Text = text;
        int wildcards = text.AsSpan().Count('*') + text.AsSpan().Count('?');
        IsExact = wildcards == 0;
        LiteralCount = text.Length - wildcards;
    }

    public string Text { get; }

    /// <summary>No wildcard: the pattern is one session id.</summary>
    public bool IsExact { get; }

    /// <summary>Characters the pattern fixes; of two patterns matching a session, the one fixing more is the more specific.</summary>
    public int LiteralCount { get; }

    /// <returns>False, with the reason, when <paramref name="text"/> could never match a session id.</returns>
    public static bool TryParse(string? text, out SessionPattern? pattern, out string? error)
    {
        pattern = null;
        if (string.IsNullOrEmpty(text) || text.Length > HandshakeProtocol.MaxSessionIdLength * 2)
        {
            error = $"'{text}' is not a session pattern: 1 to {HandshakeProtocol.MaxSessionIdLength * 2} characters.";
            return false;
        }

        foreach (char c in text)
        {
            if (c is not ('*' or '?') && !HandshakeProtocol.IsSessionIdChar(c))
            {
                error = $"'{text}' is not a session pattern: session ids are A-Z a-z 0-9 - _ . ~, and * or ? stand for any characters.";
                return false;
            }
        }

        pattern = new SessionPattern(text);
        error = null;
        return true;
    }

    /// <summary>The runtime's own wildcard matcher (the one file enumeration uses), case-sensitive as session ids are.</summary>
    public bool IsMatch(ReadOnlySpan<char> session) => FileSystemName.MatchesSimpleExpression(Text, session, ignoreCase: false);

    public override string ToString() => Text;
}
