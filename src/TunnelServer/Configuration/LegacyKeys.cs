using Tunnel2.Hosting.Configuration;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>
/// The server's keys before the options were grouped by concern, and before a session's settings had one home
/// (<c>ProxyEntry:Sessions</c>), and where each went; taken for one release.
/// </summary>
public static class LegacyKeys
{
    public static readonly RenamedKeys Renamed = new(new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase)
    {
        ["TunnelServer:PublicUrl"] = "TunnelServer:Listeners:PublicUrl",
        ["TunnelServer:TunnelUrl"] = "TunnelServer:Listeners:TunnelUrl",
        ["TunnelServer:PublicH2cUrl"] = "TunnelServer:Listeners:PublicH2cUrl",
        ["TunnelServer:UnsentBytesLimit"] = "TunnelServer:Listeners:UnsentBytesLimit",
        ["TunnelServer:PublicReceiveBuffer"] = "TunnelServer:Listeners:PublicReceiveBuffer",
        ["TunnelServer:Certificate"] = "TunnelServer:Tls:Certificate",
        ["TunnelServer:CertificateKey"] = "TunnelServer:Tls:CertificateKey",
        ["TunnelServer:MaxFramePayload"] = "TunnelServer:Uplink:MaxFramePayload",
        ["TunnelServer:InitialStreamWindow"] = "TunnelServer:Uplink:InitialStreamWindow",
        ["TunnelServer:ConnectionWindow"] = "TunnelServer:Uplink:ConnectionWindow",
        ["TunnelServer:MaxStreamsPerUplink"] = "TunnelServer:Uplink:MaxStreams",
        ["TunnelServer:KeepAliveInterval"] = "TunnelServer:Uplink:KeepAliveInterval",
        ["TunnelServer:KeepAliveTimeout"] = "TunnelServer:Uplink:KeepAliveTimeout",
        ["TunnelServer:UplinkReceiveBuffer"] = "TunnelServer:Uplink:ReceiveBuffer",
        ["TunnelServer:UplinkSegmentSize"] = "TunnelServer:Uplink:SegmentSize",
        ["ProxyEntry:ResponseHeadTimeout"] = "TunnelServer:Uplink:ResponseHeadTimeout",
        ["TunnelServer:RequestHeadersTimeout"] = "TunnelServer:Limits:RequestHeadersTimeout",
        ["TunnelServer:HandshakeTimeout"] = "TunnelServer:Limits:HandshakeTimeout",
        ["TunnelServer:MaxFailedLoginsPerMinute"] = "TunnelServer:Limits:MaxFailedLoginsPerMinute",
        ["TunnelServer:MaxUplinksPerAddress"] = "TunnelServer:Limits:MaxUplinksPerAddress",
        ["TunnelServer:AdminUrl"] = "TunnelServer:Admin:Url",
        ["TunnelServer:AdminToken"] = "TunnelServer:Admin:Token",
        ["TunnelServer:CertificateAsk"] = "TunnelServer:Admin:CertificateAsk",
        ["TunnelServer:NodeName"] = "TunnelServer:Cluster:NodeName",
        ["TunnelServer:NodeHeader"] = "TunnelServer:Cluster:NodeHeader",
        ["ProxyEntry:MaxRequestHeadersBytes"] = "ProxyEntry:Limits:MaxRequestHeadersBytes",
        ["ProxyEntry:MaxRequestBodySize"] = "ProxyEntry:Limits:MaxRequestBodySize",
        ["ProxyEntry:HostSuffix"] = "ProxyEntry:Routing:HostSuffix",
        ["ProxyEntry:Hosts"] = "ProxyEntry:Routing:Hosts",

        // Per-session settings found their one home, the session's policy (ProxyEntry:Sessions and ProxyEntry:SessionDefaults).
        ["ProxyEntry:Balancing:Sessions"] = "ProxyEntry:Sessions",
        ["ProxyEntry:RateLimits:PerSession"] = "ProxyEntry:SessionDefaults:RateLimit",
        ["TunnelServer:Tcp:MaxConnectionsPerSession"] = "ProxyEntry:SessionDefaults:MaxTcpConnections",
    });
}
