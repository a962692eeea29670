using System.Reflection;

namespace Tunnel2.TunnelServer.Admin;

/// <summary>
/// The live dashboard at <c>/</c> on the admin listener: one HTML page with its script and styles inline, built into the
/// binary (no CDN, no build step), that reads <c>/api/live</c> (server-sent events) and <c>/api/sessions/{id}</c>.
/// </summary>
public static class Dashboard
{
    private static readonly Lazy<byte[]> Html = new(() =>
    {
        using Stream stream = typeof(Dashboard).Assembly.GetManifestResourceStream("Tunnel2.TunnelServer.Admin.Dashboard.index.html")
                              ?? throw new InvalidOperationException("The dashboard page is missing from the build.");
        using var copy = new MemoryStream();
        stream.CopyTo(copy);
        return copy.ToArray();
    });

    public static IResult Page() => TypedResults.Bytes(Html.Value, "text/html; charset=utf-8");
}
