namespace Tunnel2.TunnelServer.Configuration;

/// <summary>The server's admin listener (section <c>TunnelServer:Admin</c>).</summary>
public sealed class ServerAdminOptions
{
    /// <summary>
    /// The admin listener, <c>http://127.0.0.1:12002</c> for instance, serving <c>/metrics</c> (Prometheus),
    /// <c>/healthz</c> and the admin API (<c>/api/…</c>, described at <c>/openapi/v1.json</c>). Null: none, and no
    /// metrics are collected. Anywhere but loopback it needs a token.
    /// </summary>
    public string? Url { get; set; }

    /// <summary>A bearer token every admin request must carry (at least 16 characters); required off loopback.</summary>
    public string? Token { get; set; }

    /// <summary>
    /// Answer an edge's question "may I get a certificate for this name?" at <c>GET /edge/ask?domain=…</c> on the admin
    /// listener (Caddy's on-demand TLS <c>ask</c>): 200 for a custom domain or a session host some client may serve,
    /// else 404. Needs the admin listener and host routing (docs/edge.md).
    /// </summary>
    public bool CertificateAsk { get; set; }
}
