using Microsoft.AspNetCore.Http;
using Tunnel2.Balancing;

namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>
/// A public request as the affinity policies read it: ASP.NET Core's cookies, headers (several values joined with
/// commas) and the caller's address; an affinity cookie is for the session's path, or the whole host when the session
/// has a host name of its own.
/// </summary>
/// <param name="routePrefix">The session's path prefix (<c>/session/{id}</c>), empty on its own host.</param>
internal readonly struct HttpAffinityRequest(HttpContext context, string routePrefix) : IAffinityRequest
{
    public string? Cookie(string name) => context.Request.Cookies[name];

    public string? Header(string name) => context.Request.Headers[name] is { Count: > 0 } values ? values.ToString() : null;

    public string? ClientAddress() => context.Connection.RemoteIpAddress?.ToString();

    public string CookiePath => routePrefix.Length == 0 ? "/" : routePrefix + "/";

    public bool IsHttps => context.Request.IsHttps;
}
