using System.ComponentModel.DataAnnotations;
using Tunnel2.Hosting.Configuration;
using Microsoft.Extensions.Options;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>
/// The client's settings (section <c>TunnelClient</c>: appsettings, <c>TunnelClient__*</c> variables, command line): the
/// server, session and token at the top, the rest grouped by concern.
/// </summary>
public sealed class TunnelClientOptions
{
    public const string SectionName = "TunnelClient";

    /// <summary>
    /// The server's tunnel endpoint, e.g. http://127.0.0.1:12001, or https://… for TLS; or several separated by commas
    /// (the nodes of a cluster), each then given <c>Uplink:Count</c> uplinks of its own.
    /// </summary>
    [Required(ErrorMessage = "TunnelClient:Server is required (--server).")]
    public string Server { get; set; } = "http://127.0.0.1:12001";

    /// <summary>The session this client serves: public requests to /session/{Session}/… reach its backend.</summary>
    [Required(ErrorMessage = "TunnelClient:Session is required (--session).")]
    public string Session { get; set; } = string.Empty;

    /// <summary>The token the server expects of this client (its shared token, or this client's in the credentials file).</summary>
    [Required(ErrorMessage = "TunnelClient:Token is required (--token or TunnelClient__Token).")]
    public string Token { get; set; } = string.Empty;

    /// <summary>This client's share of the session's traffic when the server balances it by weight (1-100).</summary>
    [Range(1, 100)]
    public int Weight { get; set; } = 1;

    /// <summary>How long a connection to the server, or to a backend, may take to open.</summary>
    [TimeSpanRange("00:00:00.100", "00:10:00")]
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>On stop (SIGTERM, Ctrl+C): how long the streams in flight may take to finish after the GoAway before the uplink closes.</summary>
    [TimeSpanRange("00:00:00", "01:00:00", ErrorMessage = "TunnelClient:DrainTimeout must be between 00:00:00 and 01:00:00.")]
    public TimeSpan DrainTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The backends requests are relayed to, how they are spread over several, and what each request looks like on its way there.</summary>
    [ValidateObjectMembers]
    public BackendsOptions Backends { get; set; } = new();

    /// <summary>The uplinks to the server.</summary>
    [ValidateObjectMembers]
    public ClientUplinkOptions Uplink { get; set; } = new();

    /// <summary>How an <c>https://</c> server's certificate is checked.</summary>
    public ClientTlsOptions Tls { get; set; } = new();

    /// <summary>What the client lets through to its backends at once.</summary>
    [ValidateObjectMembers]
    public ClientLimitsOptions Limits { get; set; } = new();

    /// <summary>Active health probes of the backends.</summary>
    [ValidateObjectMembers]
    public BackendHealthOptions Health { get; set; } = new();

    /// <summary>Visitor rules the client declares for its own session at login.</summary>
    public VisitorRulesOptions Visitors { get; set; } = new();

    /// <summary>The client's admin listener.</summary>
    public ClientAdminOptions Admin { get; set; } = new();

    /// <summary>The request inspector, like ngrok's.</summary>
    [ValidateObjectMembers]
    public InspectorOptions Inspector { get; set; } = new();

    /// <summary>Raw TCP: the target exposed on a public TCP port of the session (docs/tcp.md).</summary>
    [ValidateObjectMembers]
    public TcpClientOptions Tcp { get; set; } = new();

    /// <summary>Upgraded streams (WebSockets): which relay moves their bytes.</summary>
    [ValidateObjectMembers]
    public UpgradesOptions Upgrades { get; set; } = new();
}
