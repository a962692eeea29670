using System.Net;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// Visitor access control, checked for every public request before anything reaches an uplink: the session's
/// <see cref="SessionVisitorRules"/> (the credentials file's entry, then what its client declared at login), which the
/// caller reads from the session's policy, and a limit on wrong credentials per address. The header that carried
/// accepted credentials is the tunnel's, not the backend's: it is taken off before the request is forwarded. Under a
/// rule, the identity headers (<see cref="ForwardedUserHeader"/>, <see cref="ForwardedEmailHeader"/>) are the tunnel's
/// too: a caller's are removed, and the visitor's identity, when a rule knows it, is set. A session with no rules pays
/// one field read per request.
/// </summary>
public sealed class VisitorAccess : IDisposable
{
    public const string ForwardedUserHeader = "X-Forwarded-User";
    public const string ForwardedEmailHeader = "X-Forwarded-Email";

    private readonly FailedAttempts _failures;
    private readonly ILogger<VisitorAccess> _logger;

    public VisitorAccess(IOptions<ProxyEntryOptions> options, ILogger<VisitorAccess> logger)
    {
        _logger = logger;
        _failures = new FailedAttempts(options.Value.RateLimits.FailedVisitorLoginsPerMinute);
    }

    /// <returns>Null when the visitor may go on; otherwise the answer to send (already logged).</returns>
    /// <param name="rules">The session's rules, from its policy (read once per request with the route).</param>
    /// <param name="prefix"><c>/session/{id}</c> when the path named the session; empty when its host did.</param>
    public ValueTask<VisitorDenial?> CheckAsync(HttpContext context, SessionVisitorRules rules, string session, string prefix = "") =>
        rules.IsEmpty ? default : CheckAsync(context, session, prefix, rules.FromFile, rules.Declared);

    public void Dispose() => _failures.Dispose();

    private async ValueTask<VisitorDenial?> CheckAsync(HttpContext context, string session, string prefix, VisitorPolicy? server, VisitorPolicy? declared)
    {
        IPAddress? remote = context.Connection.RemoteIpAddress;
        VisitorCheck? serverCheck = null, declaredCheck = null;
        foreach (VisitorPolicy? policy in new[] { server, declared })
        {
            if (policy is null)
            {
                continue;
            }

            var check = new VisitorCheck(context, session, remote, _failures) { Prefix = prefix };
            if (Deny(check, await policy.CheckAsync(check), policy) is { } denial)
            {
                return denial;
            }

            if (ReferenceEquals(policy, server))
            {
                serverCheck = check;
            }
            else
            {
                declaredCheck = check;
            }
        }

        IHeaderDictionary headers = context.Request.Headers;
        headers.Remove(ForwardedUserHeader);
        headers.Remove(ForwardedEmailHeader);
        foreach (VisitorCheck? check in (ReadOnlySpan<VisitorCheck?>)[serverCheck, declaredCheck])
        {
            if (check?.CredentialsHeader is { } used)
            {
                headers.Remove(used);
            }
        }

        VisitorCheck? named = serverCheck?.User is not null ? serverCheck : declaredCheck?.User is not null ? declaredCheck : null;
        if (named is not null)
        {
            headers[ForwardedUserHeader] = named.User;
            if (named.Email is not null)
            {
                headers[ForwardedEmailHeader] = named.Email;
            }
        }

        return null;
    }

    private VisitorDenial? Deny(VisitorCheck check, VisitorVerdict verdict, VisitorPolicy policy)
    {
        string session = check.Session;
        IPAddress? remote = check.Remote;
        switch (verdict)
        {
            case VisitorVerdict.Allowed:
                return null;
            case VisitorVerdict.Answered:
                return VisitorDenial.Answered;
            case VisitorVerdict.AddressDenied:
                ProxyEntryLog.VisitorRefused(_logger, session, remote, "address-denied");
                return VisitorDenial.Forbidden("This session does not take requests from your address.");
            case VisitorVerdict.TooManyAttempts:
                ProxyEntryLog.VisitorRefused(_logger, session, remote, "too-many-failed-attempts");
                return new VisitorDenial(StatusCodes.Status429TooManyRequests, ProblemTypes.TooManyFailedAttempts, "Too many failed attempts",
                    "This address sent too many wrong credentials; try again later.", [], Math.Max(1, (int)Math.Ceiling(check.RetryAfter.TotalSeconds)));
            case VisitorVerdict.CredentialsWrong:
                if (check.ProblemBy is null) // a rule that found the problem has logged the refusal, with why and what to do
                {
                    ProxyEntryLog.VisitorRefused(_logger, session, remote, "credentials-wrong");
                }

                return Unauthorized(policy, check);
            default:
                ProxyEntryLog.VisitorRefused(_logger, session, remote, "credentials-missing");
                return Unauthorized(policy, check);
        }
    }

    private static VisitorDenial Unauthorized(VisitorPolicy policy, VisitorCheck check) =>
        VisitorDenial.Unauthorized(check.Problem is null ? policy.Needs() : check.Problem + " " + policy.Needs(), policy.Challenges(check.Session, check));
}
