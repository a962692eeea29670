using System.Diagnostics;

namespace Tunnel2.TunnelClient.Diagnostics;

/// <summary>ActivitySource <c>Tunnel2.TunnelClient</c>: one <c>tunnel2.relay</c> span per request relayed to a backend.</summary>
public static class TunnelClientTracing
{
    public const string SourceName = "Tunnel2.TunnelClient";

    public const string RelaySpan = "tunnel2.relay";

    public static readonly ActivitySource Source = new(SourceName);
}
