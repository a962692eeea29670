using Tunnel2.Hosting.Configuration;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>The client's keys before the options were grouped by concern, and where each went; taken for one release.</summary>
public static class LegacyKeys
{
    public static readonly RenamedKeys Renamed = new(new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase)
    {
        ["TunnelClient:Backend"] = "TunnelClient:Backends:Urls",
        ["TunnelClient:BackendBalancing"] = "TunnelClient:Backends:Strategy",
        ["TunnelClient:Backends:Balancing"] = "TunnelClient:Backends:Strategy",
        ["TunnelClient:BackendAffinity"] = "TunnelClient:Backends:Affinity",
        ["TunnelClient:BackendAffinityHeader"] = "TunnelClient:Backends:AffinityHeader",
        ["TunnelClient:BackendAffinityCookie"] = "TunnelClient:Backends:AffinityCookie",
        ["TunnelClient:HostHeader"] = "TunnelClient:Backends:HostHeader",
        ["TunnelClient:PathPrefix"] = "TunnelClient:Backends:PathPrefix",
        ["TunnelClient:RewritePaths"] = "TunnelClient:Backends:RewritePaths",
        ["TunnelClient:RequestBuffering"] = "TunnelClient:Backends:RequestBuffering",
        ["TunnelClient:PooledConnectionIdleTimeout"] = "TunnelClient:Backends:PooledConnectionIdleTimeout",
        ["TunnelClient:Uplinks"] = "TunnelClient:Uplink:Count",
        ["TunnelClient:Transport"] = "TunnelClient:Uplink:Transport",
        ["TunnelClient:ResolveInterval"] = "TunnelClient:Uplink:ResolveInterval",
        ["TunnelClient:ReconnectMinDelay"] = "TunnelClient:Uplink:ReconnectMinDelay",
        ["TunnelClient:ReconnectMaxDelay"] = "TunnelClient:Uplink:ReconnectMaxDelay",
        ["TunnelClient:KeepAliveInterval"] = "TunnelClient:Uplink:KeepAliveInterval",
        ["TunnelClient:KeepAliveTimeout"] = "TunnelClient:Uplink:KeepAliveTimeout",
        ["TunnelClient:UnsentBytesLimit"] = "TunnelClient:Uplink:UnsentBytesLimit",
        ["TunnelClient:UplinkReceiveBuffer"] = "TunnelClient:Uplink:ReceiveBuffer",
        ["TunnelClient:UplinkSegmentSize"] = "TunnelClient:Uplink:SegmentSize",
        ["TunnelClient:QueuedDataLimit"] = "TunnelClient:Uplink:QueuedDataLimit",
        ["TunnelClient:CaCertificate"] = "TunnelClient:Tls:CaCertificate",
        ["TunnelClient:ServerCertificateSha256"] = "TunnelClient:Tls:ServerCertificateSha256",
        ["TunnelClient:MaxConcurrency"] = "TunnelClient:Limits:MaxConcurrency",
        ["TunnelClient:MaxQueue"] = "TunnelClient:Limits:MaxQueue",
        ["TunnelClient:MaxUpgradedStreams"] = "TunnelClient:Limits:MaxUpgradedStreams",
        ["TunnelClient:UpgradedIdleTimeout"] = "TunnelClient:Limits:UpgradedIdleTimeout",
        ["TunnelClient:HealthPath"] = "TunnelClient:Health:Path",
        ["TunnelClient:HealthInterval"] = "TunnelClient:Health:Interval",
        ["TunnelClient:HealthTimeout"] = "TunnelClient:Health:Timeout",
        ["TunnelClient:BasicAuth"] = "TunnelClient:Visitors:BasicAuth",
        ["TunnelClient:CidrAllow"] = "TunnelClient:Visitors:CidrAllow",
        ["TunnelClient:CidrDeny"] = "TunnelClient:Visitors:CidrDeny",
        ["TunnelClient:AdminUrl"] = "TunnelClient:Admin:Url",
        ["TunnelClient:AdminToken"] = "TunnelClient:Admin:Token",
        ["TunnelClient:InspectUrl"] = "TunnelClient:Inspector:Url",
        ["TunnelClient:InspectCapacity"] = "TunnelClient:Inspector:Capacity",
        ["TunnelClient:InspectBodyLimit"] = "TunnelClient:Inspector:BodyLimit",
        ["TunnelClient:InspectRevealSecrets"] = "TunnelClient:Inspector:RevealSecrets",
    });
}
