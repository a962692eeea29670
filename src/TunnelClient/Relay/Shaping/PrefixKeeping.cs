using Tunnel2.Protocol.Heads;

namespace Tunnel2.TunnelClient.Relay.Shaping;

/// <summary>
/// <see cref="PathPrefixMode.Keep"/>: puts back the prefix ProxyEntry removed and announced in <c>X-Forwarded-Prefix</c>,
/// so the backend sees the canonical path the caller asked for. The header goes: a framework that honours it
/// (ASP.NET Core's forwarded headers, Spring's ForwardedHeaderFilter) would otherwise add the prefix a second time.
/// Done in the client, which writes the backend's request, so it works with any server version.
/// </summary>
public static class PrefixKeeping
{
    private const string ForwardedPrefix = "X-Forwarded-Prefix";

    /// <returns>The head the backend must get: <paramref name="head"/> itself in host mode (no prefix was removed).</returns>
    public static RequestHead Restore(RequestHead head)
    {
        List<HeaderField> headers = head.Headers;
        for (int i = 0; i < headers.Count; i++)
        {
            if (headers[i].Name.Equals(ForwardedPrefix, StringComparison.OrdinalIgnoreCase))
            {
                string prefix = headers[i].Value.TrimEnd('/');
                headers.RemoveAt(i);
                if (prefix.Length == 0 || prefix[0] != '/')
                {
                    return head; // not a path ProxyEntry would send: the header is dropped, the path left alone
                }

                return new RequestHead(head.Method, prefix + head.Target, headers, head.IsUpgrade);
            }
        }

        return head;
    }
}
