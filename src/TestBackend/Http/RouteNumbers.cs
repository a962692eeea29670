using System.Globalization;

namespace Tunnel2.TestBackend.Http;

/// <summary>Reads whole-number route values; the endpoints answer 400 themselves rather than use route constraints (which would give 404).</summary>
internal static class RouteNumbers
{
    public static bool TryGetInt64(HttpContext context, string name, out long value, out string raw)
    {
        raw = context.Request.RouteValues[name] as string ?? string.Empty;
        return long.TryParse(raw, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out value);
    }
}
