using System.Collections.Concurrent;
using System.Net;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// Visitor access control, checked for every public request before anything reaches an uplink: the session's
/// <see cref="VisitorPolicy"/> from the server's credentials file, then the one its client declared at login (when the
/// server allows that), and a limit on wrong credentials per address. The header that carried accepted credentials is
/// the tunnel's, not the backend's: it is taken off before the request is forwarded. A server with no policies pays
/// two field reads per request.
/// </summary>
public sealed class VisitorAccess : IDisposable
{
    private readonly FailedAttempts _failures;
    private readonly ILogger<VisitorAccess> _logger;
    private readonly ConcurrentDictionary<string, VisitorPolicy> _declared = new(StringComparer.Ordinal);
    private VisitorPolicies _policies = VisitorPolicies.None;
    private volatile bool _anyDeclared;

    public VisitorAccess(IOptions<ProxyEntryOptions> options, ILogger<VisitorAccess> logger)
    {
        _logger = logger;
        _failures = new FailedAttempts(options.Value.RateLimits.FailedVisitorLoginsPerMinute);
    }

    public VisitorPolicies Policies
    {
        get => Volatile.Read(ref _policies);
        set => Volatile.Write(ref _policies, value);
    }

    /// <summary>
    /// The rules a client of <paramref name="session"/> declared at its login; null clears them. The latest login of the
    /// session decides (all uplinks of one client declare the same).
    /// </summary>
    public void Declare(string session, VisitorPolicy? policy)
    {
        if (policy is not null)
        {
            _declared[session] = policy;
            _anyDeclared = true;
        }
        else if (_anyDeclared)
        {
            _declared.TryRemove(session, out _);
        }
    }

    /// <returns>Null when the visitor may go on; otherwise the answer to send (already logged).</returns>
    public VisitorDenial? Check(HttpContext context, string session)
    {
        VisitorPolicies policies = Policies;
        VisitorPolicy? server = policies.Count == 0 ? null : policies.For(session);
        VisitorPolicy? declared = _anyDeclared && _declared.TryGetValue(session, out VisitorPolicy? fromClient) ? fromClient : null;
        if (server is null && declared is null)
        {
            return null;
        }

        string? serverHeader = null, declaredHeader = null;
        VisitorDenial? denial = server is null ? null : Check(context, session, server, out serverHeader);
        denial ??= declared is null ? null : Check(context, session, declared, out declaredHeader);
        if (denial is not null)
        {
            return denial;
        }

        foreach (string? used in (ReadOnlySpan<string?>)[serverHeader, declaredHeader])
        {
            if (used is not null)
            {
                context.Request.Headers.Remove(used);
            }
        }

        return null;
    }

    /// <summary>
    /// A raw TCP caller of <paramref name="session"/> (which can carry no credentials): the same address rules as an HTTP
    /// visitor, from the server's policy and the client's declared one. A policy that wants credentials takes no TCP
    /// caller at all (<see cref="VisitorVerdict.CredentialsMissing"/>): the session is closed rather than left open.
    /// </summary>
    public VisitorVerdict CheckTcpCaller(string session, IPAddress? remote)
    {
        VisitorPolicies policies = Policies;
        foreach (VisitorPolicy? policy in (ReadOnlySpan<VisitorPolicy?>)[policies.Count == 0 ? null : policies.For(session),
                     _anyDeclared && _declared.TryGetValue(session, out VisitorPolicy? declared) ? declared : null])
        {
            if (policy is null)
            {
                continue;
            }

            if (!policy.AllowsAddress(remote))
            {
                return VisitorVerdict.AddressDenied;
            }

            if (policy.WantsCredentials)
            {
                return VisitorVerdict.CredentialsMissing;
            }
        }

        return VisitorVerdict.Allowed;
    }

    public void Dispose() => _failures.Dispose();

    private VisitorDenial? Check(HttpContext context, string session, VisitorPolicy policy, out string? credentialsHeader)
    {
        credentialsHeader = null;
        IPAddress? remote = context.Connection.RemoteIpAddress;
        VisitorVerdict verdict = policy.Check(context.Request, remote, _failures, out credentialsHeader, out TimeSpan wait);
        switch (verdict)
        {
            case VisitorVerdict.Allowed:
                return null;
            case VisitorVerdict.AddressDenied:
                ProxyEntryLog.VisitorRefused(_logger, session, remote, "address-denied");
                return new VisitorDenial(StatusCodes.Status403Forbidden, ProblemTypes.VisitorForbidden, "Forbidden",
                    "This session does not take requests from your address.", []);
            case VisitorVerdict.TooManyAttempts:
                ProxyEntryLog.VisitorRefused(_logger, session, remote, "too-many-failed-attempts");
                return new VisitorDenial(StatusCodes.Status429TooManyRequests, ProblemTypes.TooManyFailedAttempts, "Too many failed attempts",
                    "This address sent too many wrong credentials; try again later.", [], Math.Max(1, (int)Math.Ceiling(wait.TotalSeconds)));
            case VisitorVerdict.CredentialsWrong:
                ProxyEntryLog.VisitorRefused(_logger, session, remote, "credentials-wrong");
                return Unauthorized(policy, session);
            default:
                ProxyEntryLog.VisitorRefused(_logger, session, remote, "credentials-missing");
                return Unauthorized(policy, session);
        }
    }

    private static VisitorDenial Unauthorized(VisitorPolicy policy, string session) =>
        new(StatusCodes.Status401Unauthorized, ProblemTypes.VisitorUnauthorized, "Unauthorized",
            policy.Users.Count > 0 && policy.ApiKeys.Count > 0
                ? "This session needs a user name and password (basic auth) or an API key (Authorization: Bearer, or X-Api-Key)."
                : policy.Users.Count > 0
                    ? "This session needs a user name and password (basic auth)."
                    : "This session needs an API key (Authorization: Bearer <key>, or X-Api-Key: <key>).",
            policy.Challenges(session));
}
