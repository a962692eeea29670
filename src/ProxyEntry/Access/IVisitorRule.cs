using System.Net;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// One rule of a session's <see cref="VisitorPolicy"/>: one class per kind (<see cref="AddressRule"/>,
/// <see cref="BasicAuthRule"/>, <see cref="ApiKeyRule"/>, …), each with its own parse (<see cref="VisitorRuleKinds"/>).
/// Every rule's address gate must pass; then, when any rule asks who the visitor is, one of those rules must accept the
/// credentials the request carries.
/// </summary>
public interface IVisitorRule
{
    /// <summary>The rule's name in logs and answers ("cidr", "basic", "api-key", …).</summary>
    string Kind { get; }

    /// <summary>
    /// True when the rule asks who the visitor is. A raw TCP caller cannot say, so a session with such a rule takes no
    /// TCP caller.
    /// </summary>
    bool WantsCredentials { get; }

    /// <summary>
    /// True when the rule leads a browser through a login (it cannot guard a TCP-only session, and it may answer the
    /// request itself: a redirect, a callback).
    /// </summary>
    bool IsLogin => false;

    /// <summary>The address gate, checked before any credentials; false turns the visitor away with 403.</summary>
    bool AllowsAddress(IPAddress? remote) => true;

    /// <summary>Looks at the credentials the request carries, if they are this rule's kind.</summary>
    ValueTask<CredentialOutcome> CheckAsync(VisitorCheck check) => ValueTask.FromResult(CredentialOutcome.Absent);

    /// <summary>The <c>WWW-Authenticate</c> challenge a 401 carries for this rule; null for none.</summary>
    string? Challenge(string session, VisitorCheck? check) => null;

    /// <summary>What the rule asks for, for the 401's detail ("an API key (…)"); null for none.</summary>
    string? Asks => null;
}

/// <summary>What one credentials rule made of a request.</summary>
public enum CredentialOutcome
{
    /// <summary>The request carries no credentials of this rule's kind.</summary>
    Absent,

    /// <summary>The credentials are right: the visitor is in.</summary>
    Accepted,

    /// <summary>The request carries credentials of this kind, and they are wrong.</summary>
    Wrong,

    /// <summary>The visitor's address has used up its failed attempts.</summary>
    Blocked,

    /// <summary>The rule has answered the request itself (a login redirect, a callback): nothing is forwarded.</summary>
    Answered,
}
