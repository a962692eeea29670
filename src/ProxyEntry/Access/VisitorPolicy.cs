using System.Net;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>What a visitor's request gets from a session's <see cref="VisitorPolicy"/>.</summary>
public enum VisitorVerdict
{
    Allowed,

    /// <summary>The visitor's address is on the deny list, or not on a non-empty allow list: 403.</summary>
    AddressDenied,

    /// <summary>The session wants credentials and the request carries none: 401 with the challenges.</summary>
    CredentialsMissing,

    /// <summary>The request carries credentials that are not the session's: 401, and a failure counted against the address.</summary>
    CredentialsWrong,

    /// <summary>The address has used up its failed attempts: 429, and no password is checked.</summary>
    TooManyAttempts,

    /// <summary>A rule answered the request itself (a login's redirect or callback): nothing is forwarded.</summary>
    Answered,
}

/// <summary>
/// Who may visit the sessions a pattern matches: a list of <see cref="IVisitorRule"/>s. Every rule's address gate first
/// (<see cref="AddressRule"/>: deny list, then a non-empty allow list); then, if any rule asks for credentials, one of
/// those rules must accept what the request carries (<see cref="BasicAuthRule"/>, <see cref="ApiKeyRule"/>, …).
/// </summary>
public sealed class VisitorPolicy
{
    public const string ApiKeyHeader = ApiKeyRule.Header;

    private readonly IVisitorRule[] _credentials;

    public VisitorPolicy(SessionPattern sessions, IReadOnlyList<IVisitorRule> rules)
    {
        Sessions = sessions;
        Rules = rules;
        _credentials = [.. rules.Where(static rule => rule.WantsCredentials)];
    }

    public SessionPattern Sessions { get; }

    public IReadOnlyList<IVisitorRule> Rules { get; }

    public bool WantsCredentials => _credentials.Length > 0;

    /// <summary>True when a rule leads a browser through a login (no TCP caller can follow one).</summary>
    public bool HasLogin => Rules.Any(static rule => rule.IsLogin);

    /// <summary>The policy's first rule of kind <typeparamref name="T"/>, or null.</summary>
    public T? Rule<T>() where T : class, IVisitorRule => Rules.OfType<T>().FirstOrDefault();

    /// <summary>
    /// Checks one request. <see cref="VisitorCheck"/> carries the request's one decision against the failed-attempt
    /// limit of its address: an address out of attempts gets <see cref="VisitorVerdict.TooManyAttempts"/> whatever it
    /// sends; credentials that no rule accepts are counted once; a rule whose check takes time counts before it runs.
    /// </summary>
    public async ValueTask<VisitorVerdict> CheckAsync(VisitorCheck check)
    {
        if (!AllowsAddress(check.Remote))
        {
            return VisitorVerdict.AddressDenied;
        }

        bool presented = false;
        foreach (IVisitorRule rule in _credentials)
        {
            switch (await rule.CheckAsync(check))
            {
                case CredentialOutcome.Accepted:
                    return (check.Decided ? check.Blocked : check.Decide(failed: false) == AttemptVerdict.Blocked)
                        ? VisitorVerdict.TooManyAttempts : VisitorVerdict.Allowed;
                case CredentialOutcome.Blocked:
                    return VisitorVerdict.TooManyAttempts;
                case CredentialOutcome.Answered:
                    return VisitorVerdict.Answered;
                case CredentialOutcome.Wrong:
                    presented = true;
                    break;
            }
        }

        if (!WantsCredentials)
        {
            return VisitorVerdict.Allowed;
        }

        // Credentials no rule of the session reads (Digest, a key where only users are known) are wrong ones.
        presented |= check.Request.Headers.Authorization.Count > 0 || check.Request.Headers[ApiKeyHeader].Count > 0;
        if (presented)
        {
            return (check.Decided ? check.Blocked : check.Decide(failed: true) == AttemptVerdict.Blocked)
                ? VisitorVerdict.TooManyAttempts : VisitorVerdict.CredentialsWrong;
        }

        return (check.Decided ? check.Blocked : check.Decide(failed: false) == AttemptVerdict.Blocked)
            ? VisitorVerdict.TooManyAttempts : VisitorVerdict.CredentialsMissing;
    }

    /// <summary>The <c>WWW-Authenticate</c> challenges a 401 carries: one per rule that asks for credentials, in order.</summary>
    public string[] Challenges(string session, VisitorCheck? check = null)
    {
        var challenges = new List<string>(_credentials.Length);
        foreach (IVisitorRule rule in _credentials)
        {
            if (rule.Challenge(session, check) is { } challenge && !challenges.Contains(challenge))
            {
                challenges.Add(challenge);
            }
        }

        return [.. challenges];
    }

    /// <summary>What the session asks for, for a 401's detail: "This session needs … or …".</summary>
    public string Needs() => "This session needs " + string.Join(" or ", _credentials.Select(static rule => rule.Asks).OfType<string>()) + ".";

    /// <summary>The address gates alone: what a raw TCP caller is checked against too.</summary>
    public bool AllowsAddress(IPAddress? remote)
    {
        foreach (IVisitorRule rule in Rules)
        {
            if (!rule.AllowsAddress(remote))
            {
                return false;
            }
        }

        return true;
    }
}
