using System.ComponentModel.DataAnnotations;
using Tunnel2.Hosting.Configuration;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>What the client lets through to its backends at once (section <c>TunnelClient:Limits</c>; docs/http-semantics.md).</summary>
public sealed class ClientLimitsOptions
{
    /// <summary>
    /// Backend requests waiting for their response head at once, across all uplinks; more wait in the queue. A request
    /// gives its slot back once its response head is out, so a long download, an SSE stream or a WebSocket holds none.
    /// </summary>
    [Range(1, 100_000)]
    public int MaxConcurrency { get; set; } = 1000;

    /// <summary>Requests that may wait for a slot; beyond that they are refused at once with 503.</summary>
    [Range(0, 1_000_000)]
    public int MaxQueue { get; set; } = 10_000;

    /// <summary>
    /// Upgraded streams (WebSockets and other protocol switches) at once, counted from the upgrade request on; more
    /// get 503. Half the server's default streams per uplink, so they cannot crowd out ordinary requests.
    /// </summary>
    [Range(1, 100_000)]
    public int MaxUpgradedStreams { get; set; } = 5000;

    /// <summary>An upgraded stream that moved no byte either way for this long is closed (both sides see the connection cut).</summary>
    [TimeSpanRange("00:00:01", "1.00:00:00")]
    public TimeSpan UpgradedIdleTimeout { get; set; } = TimeSpan.FromMinutes(5);
}
