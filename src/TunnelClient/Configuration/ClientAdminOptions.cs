namespace Tunnel2.TunnelClient.Configuration;

/// <summary>The client's admin listener (section <c>TunnelClient:Admin</c>; docs/observability.md, "Metrics").</summary>
public sealed class ClientAdminOptions
{
    /// <summary>
    /// An admin listener, <c>http://127.0.0.1:12003</c> for instance, serving <c>/metrics</c> (Prometheus) and
    /// <c>/healthz</c>. Null: none, and no metrics are collected. Anywhere but loopback it needs <see cref="Token"/>.
    /// </summary>
    public string? Url { get; set; }

    /// <summary>A bearer token every request to the admin listener or the inspector must carry (at least 16 characters); required off loopback.</summary>
    public string? Token { get; set; }
}
