using Tunnel2.Hosting.Admin;

namespace Tunnel2.TunnelServer.Admin;

/// <summary>
/// The live dashboard at <c>/</c> on the admin listener: one HTML page with its script and styles inline, built into the
/// binary (no CDN, no build step), that reads <c>/api/live</c> (server-sent events) and <c>/api/sessions/{id}</c>.
/// </summary>
public static class Dashboard
{
    private static readonly Lazy<byte[]> Html = new(() =>
        AdminHost.EmbeddedPage(typeof(Dashboard).Assembly, "Tunnel2.TunnelServer.Admin.Dashboard.index.html"));

    public static IResult Page() => TypedResults.Bytes(Html.Value, "text/html; charset=utf-8");
}
