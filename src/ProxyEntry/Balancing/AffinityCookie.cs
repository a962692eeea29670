using Microsoft.AspNetCore.Http;
using Microsoft.Net.Http.Headers;
using Tunnel2.Protocol.Balancing;
using Tunnel2.ProxyEntry.Pipeline;

namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>
/// The cookie that keeps a caller on the client that answered (cookie affinity): for the session's path, or for the
/// whole host when the session has a host name of its own. Set only when the caller's cookie names another client.
/// </summary>
internal static class AffinityCookie
{
    public static void AppendIfChanged(ProxyExchange exchange)
    {
        if (exchange.Policy.Affinity == AffinityMode.Cookie && exchange.AffinityKey != exchange.Member!.AffinityKey)
        {
            exchange.Context.Response.Headers.Append(HeaderNames.SetCookie, Format(exchange));
        }
    }

    private static string Format(ProxyExchange exchange) =>
        string.Concat(exchange.Policy.AffinityCookie, "=", exchange.Member!.AffinityKey, "; Path=",
            exchange.Route.Prefix.Length == 0 ? "/" : exchange.Route.Prefix + "/",
            exchange.Context.Request.IsHttps ? "; HttpOnly; SameSite=Lax; Secure" : "; HttpOnly; SameSite=Lax");
}
