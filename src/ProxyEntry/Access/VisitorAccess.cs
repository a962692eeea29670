using System.Net;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Problems;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// Visitor access control, checked for every public request before anything reaches an uplink: the session's
/// <see cref="VisitorPolicy"/> (from the server's credentials file) and a limit on wrong credentials per address.
/// A server with no policies pays one field read per request.
/// </summary>
public sealed class VisitorAccess : IDisposable
{
    private readonly PartitionedRateLimiter<IPAddress> _failures;
    private readonly ILogger<VisitorAccess> _logger;
    private VisitorPolicies _policies = VisitorPolicies.None;

    public VisitorAccess(IOptions<ProxyEntryOptions> options, ILogger<VisitorAccess> logger)
    {
        _logger = logger;
        int perMinute = options.Value.RateLimits.FailedVisitorLoginsPerMinute;
        _failures = PartitionedRateLimiter.Create<IPAddress, IPAddress>(address => RateLimitPartition.GetTokenBucketLimiter(address, _ =>
            new TokenBucketRateLimiterOptions
            {
                TokenLimit = perMinute,
                TokensPerPeriod = Math.Max(1, perMinute / 6),
                ReplenishmentPeriod = TimeSpan.FromSeconds(10),
                QueueLimit = 0,
                AutoReplenishment = true,
            }));
    }

    public VisitorPolicies Policies
    {
        get => Volatile.Read(ref _policies);
        set => Volatile.Write(ref _policies, value);
    }

    /// <returns>Null when the visitor may go on; otherwise the answer to send (already logged).</returns>
    public VisitorDenial? Check(HttpContext context, string session)
    {
        VisitorPolicies policies = Policies;
        if (policies.Count == 0 || policies.For(session) is not { } policy)
        {
            return null;
        }

        IPAddress? remote = context.Connection.RemoteIpAddress;
        if (policy.WantsCredentials && remote is not null)
        {
            using RateLimitLease probe = _failures.AttemptAcquire(remote, permitCount: 0);
            if (!probe.IsAcquired)
            {
                int retryAfter = probe.TryGetMetadata(MetadataName.RetryAfter, out TimeSpan wait) ? Math.Max(1, (int)Math.Ceiling(wait.TotalSeconds)) : 10;
                ProxyEntryLog.VisitorRefused(_logger, session, remote, "too-many-failed-attempts");
                return new VisitorDenial(StatusCodes.Status429TooManyRequests, ProblemTypes.TooManyFailedAttempts, "Too many failed attempts",
                    "This address sent too many wrong credentials; try again later.", [], retryAfter);
            }
        }

        switch (policy.Check(context.Request, remote))
        {
            case VisitorVerdict.Allowed:
                return null;
            case VisitorVerdict.AddressDenied:
                ProxyEntryLog.VisitorRefused(_logger, session, remote, "address-denied");
                return new VisitorDenial(StatusCodes.Status403Forbidden, ProblemTypes.VisitorForbidden, "Forbidden",
                    "This session does not take requests from your address.", []);
            case VisitorVerdict.CredentialsWrong:
                if (remote is not null)
                {
                    _failures.AttemptAcquire(remote, permitCount: 1).Dispose();
                }

                ProxyEntryLog.VisitorRefused(_logger, session, remote, "credentials-wrong");
                return Unauthorized(policy, session);
            default:
                ProxyEntryLog.VisitorRefused(_logger, session, remote, "credentials-missing");
                return Unauthorized(policy, session);
        }
    }

    public void Dispose() => _failures.Dispose();

    private static VisitorDenial Unauthorized(VisitorPolicy policy, string session) =>
        new(StatusCodes.Status401Unauthorized, ProblemTypes.VisitorUnauthorized, "Unauthorized",
            policy.Users.Count > 0 && policy.ApiKeys.Count > 0
                ? "This session needs a user name and password (basic auth) or an API key (Authorization: Bearer, or X-Api-Key)."
                : policy.Users.Count > 0
                    ? "This session needs a user name and password (basic auth)."
                    : "This session needs an API key (Authorization: Bearer <key>, or X-Api-Key: <key>).",
            policy.Challenges(session));
}
