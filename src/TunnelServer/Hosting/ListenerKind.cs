using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http;

namespace Tunnel2.TunnelServer.Hosting;

/// <summary>Marks each connection with the listener it came in on, so one pipeline can serve both ports.</summary>
public static class ListenerKind
{
    private const string ItemKey = "tunnel2.listener";
    private static readonly object TunnelMarker = new();

    public static void MarkTunnel(IDictionary<object, object?> connectionItems) => connectionItems[ItemKey] = TunnelMarker;

    public static bool IsTunnel(HttpContext context) =>
        context.Features.Get<IConnectionItemsFeature>()?.Items.TryGetValue(ItemKey, out object? marker) == true
        && ReferenceEquals(marker, TunnelMarker);
}
