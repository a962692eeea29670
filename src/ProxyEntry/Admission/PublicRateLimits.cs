using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.Extensions.Logging;
using Tunnel2.Hosting;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Policy;
using Tunnel2.ProxyEntry.Problems;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.ProxyEntry.Admission;

/// <summary>
/// The limiters behind <see cref="RateLimitOptions"/>, for ASP.NET Core's rate-limiting middleware: a request for a
/// session takes a token from its session's bucket and from its visitor's; anything else (<c>/healthz</c>, 404s for
/// no session) takes none. The session is the one the route step chose, read from the request's exchange (its
/// <see cref="ProxyExchange"/> feature): the limiter never parses the path or the host itself.
/// </summary>
public sealed class PublicRateLimits
{
    private readonly Func<string, TokenBucketRateLimiterOptions> _bucketOf;
    private readonly PartitionedRateLimiter<HttpContext>? _perSession;
    private readonly PartitionedRateLimiter<HttpContext>? _perVisitor;

    /// <param name="policies">
    /// Each session's bucket (<see cref="SessionPolicy.RateLimit"/>): a request reads its session's policy from its
    /// exchange, and the bucket is made from it once, when the session's partition is.
    /// </param>
    public PublicRateLimits(RateLimitOptions options, SessionPolicies policies)
    {
        _bucketOf = session => policies.For(session).RateLimiter!; // one delegate for every partition: none allocated per request
        if (policies.AnyRateLimit)
        {
            _perSession = PartitionedRateLimiter.Create<HttpContext, string>(context =>
                context.Features.Get<ProxyExchange>() is { Routed.NamesSession: true, SessionPolicy.RateLimiter: not null } exchange
                ? RateLimitPartition.GetTokenBucketLimiter(exchange.Session, _bucketOf)
                : RateLimitPartition.GetNoLimiter(string.Empty));
        }

        if (options.PerVisitor.IsOn)
        {
            TokenBucketRateLimiterOptions bucket = options.PerVisitor.ToLimiterOptions();
            _perVisitor = PartitionedRateLimiter.Create<HttpContext, IPAddress>(context => context.Features.Get<ProxyExchange>() is { Routed.NamesSession: true }
                ? RateLimitPartition.GetTokenBucketLimiter(VisitorOf(context), _ => bucket)
                : RateLimitPartition.GetNoLimiter(IPAddress.None));
        }
    }

    public bool IsOn => _perSession is not null || _perVisitor is not null;

    /// <param name="leave">Hands a turned-away request's exchange back to the pool (the forwarder, which would, never runs).</param>
    internal void Configure(RateLimiterOptions options, ILogger logger, Action<ProxyExchange>? leave = null)
    {
        options.GlobalLimiter = (_perSession, _perVisitor) switch
        {
            ({ } session, { } visitor) => PartitionedRateLimiter.CreateChained(visitor, session),
            ({ } session, null) => session,
            (null, { } visitor) => visitor,
            _ => null,
        };
        options.RejectionStatusCode = StatusCodes.Status429TooManyRequests;
        options.OnRejected = (rejected, cancel) =>
        {
            HttpContext context = rejected.HttpContext;
            int retryAfter = rejected.Lease.TryGetMetadata(MetadataName.RetryAfter, out TimeSpan wait) ? Math.Max(1, (int)Math.Ceiling(wait.TotalSeconds)) : 1;
            bool visitorSpent = _perVisitor is not null && !HasTokens(_perVisitor, context); // reads the exchange: before it is given back
            if (leave is not null && context.Features.Get<ProxyExchange>() is { } exchange)
            {
                leave(exchange);
            }

            string limit = visitorSpent ? "per-visitor" : "per-session";
            ProxyEntryLog.RateLimited(logger, context.Request.Path.Value ?? "/", context.Connection.RemoteIpAddress, limit);
            return new ValueTask(ProblemResponse.WriteAsync(context, StatusCodes.Status429TooManyRequests, ProblemTypes.RateLimited, "Too many requests",
                visitorSpent
                    ? $"Your address sent more requests than this server takes from one visitor (ProxyEntry:RateLimits:PerVisitor); retry after {retryAfter.ToString(CultureInfo.InvariantCulture)} s."
                    : $"This session gets more requests than the server passes to it (ProxyEntry:Sessions:<id>:RateLimit, else ProxyEntry:SessionDefaults:RateLimit); retry after {retryAfter.ToString(CultureInfo.InvariantCulture)} s.",
                retryAfter));
        };
    }


    /// <summary>A visitor's bucket: its address, or for IPv6 its /64 (one host usually holds a whole /64).</summary>
    public static IPAddress VisitorOf(HttpContext context)
    {
        IPAddress address = context.Connection.RemoteIpAddress ?? IPAddress.None;
        if (address.IsIPv4MappedToIPv6)
        {
            return address.MapToIPv4();
        }

        if (address.AddressFamily != AddressFamily.InterNetworkV6)
        {
            return address;
        }

        Span<byte> bytes = stackalloc byte[16];
        address.TryWriteBytes(bytes, out _);
        bytes[8..].Clear();
        return new IPAddress(bytes);
    }

    private static bool HasTokens(PartitionedRateLimiter<HttpContext> limiter, HttpContext context)
    {
        using RateLimitLease probe = limiter.AttemptAcquire(context, permitCount: 0);
        return probe.IsAcquired;
    }
}
