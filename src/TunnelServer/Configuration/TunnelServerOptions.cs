using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting.Configuration;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>
/// The server process: how clients log in, its listeners, TLS, uplinks, limits, admin listener and place in a cluster
/// (section <c>TunnelServer</c>: appsettings, <c>TunnelServer__*</c> variables, command line). What public requests meet
/// on their way to a session (routing, balancing, rate limits) is ProxyEntry's section.
/// </summary>
public sealed class TunnelServerOptions
{
    public const string SectionName = "TunnelServer";

    /// <summary>
    /// One token for every client and session: for development and single-user servers. There is no default: the dev
    /// value lives only in appsettings.Development.json. A server with a credentials file may leave it unset.
    /// </summary>
    [StringLength(int.MaxValue, MinimumLength = 8, ErrorMessage = "TunnelServer:Token must be at least 8 characters.")]
    public string? Token { get; set; }

    /// <summary>
    /// A JSON file of clients (hashed tokens, each with the sessions it may serve) and visitor policies per session
    /// (basic auth, API keys, address allow and deny lists); read again when it changes, and the live uplinks of a
    /// removed token drained. docs/security.md describes it.
    /// </summary>
    public string? CredentialsFile { get; set; }

    /// <summary>
    /// Whether a client may declare visitor rules for its session at login (its <c>--basic-auth</c>, <c>--cidr-allow</c>,
    /// <c>--cidr-deny</c>), applied on top of the credentials file's. Off: such a login gets 403.
    /// </summary>
    public bool ClientVisitorPolicies { get; set; }

    /// <summary>
    /// On SIGTERM or Ctrl+C: new uplinks and public requests get 503, <c>/healthz</c> answers 503, every uplink gets
    /// GoAway, and the public requests in flight may take this long to finish before the uplinks close; then exit 0.
    /// </summary>
    [TimeSpanRange("00:00:00", "01:00:00", ErrorMessage = "TunnelServer:DrainTimeout must be between 00:00:00 and 01:00:00.")]
    public TimeSpan DrainTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>Where the server listens, and the socket options of its listeners.</summary>
    [ValidateObjectMembers]
    public ServerListenersOptions Listeners { get; set; } = new();

    /// <summary>What carries the public listener's connections: Kestrel's sockets or the server's event loop.</summary>
    [ValidateObjectMembers]
    public ServerPublicOptions Public { get; set; } = new();

    /// <summary>The certificate of the listeners whose URL is <c>https://</c> (docs/running.md, "TLS").</summary>
    public ServerTlsOptions Tls { get; set; } = new();

    /// <summary>The uplink protocol's settings, sent to each client at login, and the uplink sockets (docs/protocol.md §4).</summary>
    [ValidateObjectMembers]
    public ServerUplinkOptions Uplink { get; set; } = new();

    /// <summary>What one caller or one source address may cost the server before it is refused (docs/security.md).</summary>
    [ValidateObjectMembers]
    public ServerLimitsOptions Limits { get; set; } = new();

    /// <summary>The admin listener: metrics, health, the admin API (docs/observability.md, "Metrics").</summary>
    public ServerAdminOptions Admin { get; set; } = new();

    /// <summary>This server as one node of several behind a balancer (docs/running.md, "Several nodes behind HAProxy").</summary>
    [ValidateObjectMembers]
    public ClusterOptions Cluster { get; set; } = new();

    /// <summary>Raw TCP tunnels: the sessions' public TCP ports and their limits (docs/tcp.md).</summary>
    [ValidateObjectMembers]
    public Tunnel2.ProxyEntry.Configuration.TcpServerOptions Tcp { get; set; } = new();

    /// <summary>The settings every uplink of this server runs with.</summary>
    public UplinkSettings ToUplinkSettings() => Uplink.ToUplinkSettings();
}
