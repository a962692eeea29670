namespace Tunnel2.ProxyEntry.Routing;

/// <summary>What <see cref="HostRouter.Match"/> made of a request's host.</summary>
public enum HostRoute
{
    /// <summary>Not a tunnel host: the request goes to path routing (<c>/session/{id}/…</c>, <c>/healthz</c>).</summary>
    None,

    /// <summary>A session's host: the request goes to that session, path unchanged.</summary>
    Session,

    /// <summary>Under the host suffix, but the label before it cannot be a session id: 404 naming the host.</summary>
    NotASession,
}
