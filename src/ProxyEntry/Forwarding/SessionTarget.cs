namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// Splits a raw request target <c>/session/{id}/rest?query</c> into the session id, the prefix that is stripped and
/// the target the backend sees. Works on the raw (still percent-encoded) target so encoded bytes arrive unchanged.
/// </summary>
public static class SessionTarget
{
    public const string Prefix = "/session/";

    public static bool TryParse(string rawTarget, out Range sessionId, out int prefixLength, out string backendTarget)
    {
        sessionId = default;
        prefixLength = 0;
        backendTarget = string.Empty;
        if (!rawTarget.StartsWith(Prefix, StringComparison.Ordinal))
        {
            return false;
        }

        int start = Prefix.Length;
        int end = rawTarget.AsSpan(start).IndexOfAny('/', '?');
        end = end < 0 ? rawTarget.Length : start + end;
        if (end == start)
        {
            return false;
        }

        sessionId = start..end;
        prefixLength = end;
        if (end == rawTarget.Length)
        {
            backendTarget = "/";
        }
        else if (rawTarget[end] == '?')
        {
            backendTarget = string.Concat("/", rawTarget.AsSpan(end));
        }
        else
        {
            backendTarget = rawTarget.Substring(end);
        }

        return true;
    }
}
