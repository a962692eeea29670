using Tunnel2.Hosting.Configuration;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>Active health probes of the backends (section <c>TunnelClient:Health</c>; docs/running.md, "Balancing and health").</summary>
public sealed class BackendHealthOptions
{
    /// <summary>
    /// A path on the backend to probe, e.g. <c>/healthz</c>: while its answer is not 2xx or 3xx, the server sends this
    /// client no requests (with several backends: a backend that fails gets none, and the server none while all fail).
    /// Null: no probe, always ready.
    /// </summary>
    public string? Path { get; set; }

    /// <summary>How often the health path is probed.</summary>
    [TimeSpanRange("00:00:00.100", "01:00:00")]
    public TimeSpan Interval { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>A probe not answered within this counts as failed.</summary>
    [TimeSpanRange("00:00:00.050", "00:10:00")]
    public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(2);
}
