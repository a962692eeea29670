using System.ComponentModel.DataAnnotations;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>The request inspector, like ngrok's (section <c>TunnelClient:Inspector</c>; docs/observability.md, "Request inspector").</summary>
public sealed class InspectorOptions
{
    /// <summary>
    /// The request inspector's listener, <c>http://127.0.0.1:4040</c> for instance: its page at <c>/</c>, the last
    /// requests at <c>/api/requests</c>, replay and HAR export. Null: off, and nothing is captured.
    /// </summary>
    public string? Url { get; set; }

    /// <summary>How many of the last requests the inspector keeps.</summary>
    [Range(1, 10_000)]
    public int Capacity { get; set; } = 200;

    /// <summary>How many bytes of each request and response body the inspector keeps (the size is counted in full).</summary>
    [Range(0, 1024 * 1024)]
    public int BodyLimit { get; set; } = 64 * 1024;

    /// <summary>Show <c>Authorization</c>, <c>Proxy-Authorization</c>, <c>Cookie</c> and <c>Set-Cookie</c> values in the inspector and its HAR export instead of <c>[redacted]</c>.</summary>
    public bool RevealSecrets { get; set; }
}
