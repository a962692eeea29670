namespace Tunnel2.TunnelClient.Relay.Shaping;

/// <summary>What path mode (<c>/session/{id}/…</c>) does with the session's prefix on the way to the backend (<c>--path-prefix</c>).</summary>
public enum PathPrefixMode
{
    /// <summary>
    /// The backend gets <c>/…</c>, the prefix in <c>X-Forwarded-Prefix</c>, and its redirects and cookie paths are moved
    /// under the prefix (<c>--rewrite-paths</c>): for apps that know nothing of a prefix.
    /// </summary>
    Strip,

    /// <summary>
    /// The backend gets <c>/session/{id}/…</c> as the caller sent it, with no <c>X-Forwarded-Prefix</c> (nothing was
    /// removed) and nothing rewritten: for apps served under a base path of their own (Jupyter's <c>base_url</c>,
    /// Grafana's <c>serve_from_sub_path</c>, Gitea's <c>ROOT_URL</c>, Django's <c>FORCE_SCRIPT_NAME</c>).
    /// </summary>
    Keep,
}
