using Microsoft.AspNetCore.Http;
using Tunnel2.Protocol.Balancing;

namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>The request's affinity key under the session's policy: a cookie's value, a header's, the caller's address.</summary>
internal static class AffinityKey
{
    public static string? Of(HttpContext context, BalancingPolicy policy) => policy.Affinity switch
    {
        AffinityMode.None => null,
        AffinityMode.Cookie => context.Request.Cookies[policy.AffinityCookie],
        AffinityMode.Header => context.Request.Headers[policy.AffinityHeader!] is { Count: > 0 } values ? values.ToString() : null,
        _ => context.Connection.RemoteIpAddress?.ToString(),
    };
}
