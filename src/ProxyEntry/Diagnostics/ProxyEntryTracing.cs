using System.Diagnostics;

namespace Tunnel2.ProxyEntry.Diagnostics;

/// <summary>ActivitySource <c>Tunnel2.ProxyEntry</c>: one <c>tunnel2.forward</c> span per forwarded request.</summary>
public static class ProxyEntryTracing
{
    public const string SourceName = "Tunnel2.ProxyEntry";

    public const string ForwardSpan = "tunnel2.forward";

    public static readonly ActivitySource Source = new(SourceName);
}
