namespace Tunnel2.ProxyEntry.Routing;

/// <summary>Host routing (section <c>ProxyEntry:Routing</c>): which session a request's host name reaches, its path unchanged.</summary>
public sealed class RoutingOptions
{
    /// <summary>
    /// With <c>tunnel.example.com</c> here, a request for <c>Host: {session}.tunnel.example.com</c> goes to that session
    /// with its path unchanged (no <c>/session/{id}</c> prefix); <c>localhost</c> serves <c>*.localhost</c> in a browser.
    /// Path routing keeps working beside it, on any other host. Null: no host routing by suffix.
    /// </summary>
    public string? HostSuffix { get; set; }

    /// <summary>Custom domains: host name → session id, e.g. <c>ProxyEntry:Routing:Hosts:app.example.org=demo</c>; routed as by the suffix.</summary>
    public Dictionary<string, string> Hosts { get; set; } = new(StringComparer.OrdinalIgnoreCase);
}
