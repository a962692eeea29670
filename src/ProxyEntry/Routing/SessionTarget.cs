namespace Tunnel2.ProxyEntry.Routing;

/// <summary>What <see cref="SessionTarget.TryParse"/> found in a request target.</summary>
public enum SessionTargetStatus
{
    Ok,

    /// <summary>
    /// <c>/session/{id}</c> with no slash after the id: the caller is sent to <c>/session/{id}/</c> (query kept), as
    /// nginx does for a prefix location, so that relative links on the backend's <c>/</c> resolve inside the session.
    /// </summary>
    SessionRootWithoutSlash,

    /// <summary>The canonical path is not <c>/session/{id}</c> or below it: no session is named.</summary>
    NoSession,

    /// <summary>A <c>..</c> segment climbs above <c>/session/{id}/</c>: refused, never resolved into another session.</summary>
    ClimbsAboveSession,
}

/// <summary>
/// Splits a request target <c>/session/{id}/rest?query</c> into the session id, the prefix that is stripped and the
/// target the backend sees. All three come from the one canonical target (<see cref="CanonicalTarget"/>), so what
/// chooses the session and what reaches the backend cannot disagree. Percent-encoded bytes other than encoded dots
/// arrive unchanged.
/// </summary>
public static class SessionTarget
{
    public const string Prefix = "/session/";

    /// <summary><c>/session/{id}</c>: the two leading segments no dot-segment may climb out of.</summary>
    private const int SessionSegments = 2;

    public static SessionTargetStatus TryParse(string rawTarget, out string session, out string prefix, out string backendTarget)
    {
        session = prefix = backendTarget = string.Empty;
        switch (CanonicalTarget.TryCreate(rawTarget, SessionSegments, out string target))
        {
            case CanonicalTargetStatus.ClimbsAboveRoot:
                return SessionTargetStatus.ClimbsAboveSession;
            case CanonicalTargetStatus.NotOriginForm:
                return SessionTargetStatus.NoSession;
        }

        if (!target.StartsWith(Prefix, StringComparison.Ordinal))
        {
            return SessionTargetStatus.NoSession;
        }

        int start = Prefix.Length;
        int end = target.AsSpan(start).IndexOfAny('/', '?');
        end = end < 0 ? target.Length : start + end;
        if (end == start)
        {
            return SessionTargetStatus.NoSession;
        }

        session = target[start..end];
        prefix = target[..end];
        if (end == target.Length)
        {
            backendTarget = "/";
            return SessionTargetStatus.SessionRootWithoutSlash;
        }

        if (target[end] == '?')
        {
            backendTarget = string.Concat("/", target.AsSpan(end));
            return SessionTargetStatus.SessionRootWithoutSlash;
        }

        backendTarget = target[end..];
        return SessionTargetStatus.Ok;
    }
}
