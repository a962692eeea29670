using System.Net;
using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// One request's check against one <see cref="VisitorPolicy"/>: what the rules read (the request, the visitor's
/// address), the request's one decision against the failed-attempt limit of its address, and what an accepting rule
/// leaves behind (the header to take off, the visitor's identity).
/// </summary>
public sealed class VisitorCheck(HttpContext context, string session, IPAddress? remote, FailedAttempts? attempts)
{
    private AttemptVerdict? _decided;

    public HttpContext Context { get; } = context;

    public HttpRequest Request => Context.Request;

    public string Session { get; } = session;

    /// <summary><c>/session/{id}</c> when the path named the session; empty when its host did.</summary>
    public string Prefix { get; init; } = string.Empty;

    public IPAddress? Remote { get; } = remote;

    /// <summary>With a <see cref="AttemptVerdict.Blocked"/> decision: when the address has an attempt again.</summary>
    public TimeSpan RetryAfter { get; private set; }

    /// <summary>The header that carried the accepted credentials, for the caller to take off before forwarding.</summary>
    public string? CredentialsHeader { get; set; }

    /// <summary>
    /// Who the accepting rule says the visitor is (sent to the backend as <c>X-Forwarded-User</c>); null: nobody named.
    /// A name that could not stand in a header line (control characters, over 256 characters) is dropped.
    /// </summary>
    public string? User
    {
        get;
        set => field = HeaderSafe(value);
    }

    /// <summary>The visitor's email, when the accepting rule knows it (<c>X-Forwarded-Email</c>); dropped as <see cref="User"/> is.</summary>
    public string? Email
    {
        get;
        set => field = HeaderSafe(value);
    }

    /// <summary>Why a rule refused the credentials, for the 401's detail and its challenge (a token that expired, …).</summary>
    public string? Problem { get; set; }

    /// <summary>The rule that found the <see cref="Problem"/> (its challenge says so).</summary>
    public IVisitorRule? ProblemBy { get; set; }

    /// <summary>True once the request has had its decision against the failed-attempt limit.</summary>
    public bool Decided => _decided is not null;

    public bool Blocked => _decided == AttemptVerdict.Blocked;

    /// <summary>
    /// The request's decision against the failed-attempt limit (none without an address or a limit): blocked, or counted
    /// when <paramref name="failed"/>. A rule whose check takes time (bcrypt) decides before it runs and
    /// <see cref="Refund"/>s when right, so concurrent guesses from one address cannot outrun the count.
    /// </summary>
    public AttemptVerdict Decide(bool failed)
    {
        AttemptVerdict verdict;
        if (attempts is null || Remote is null)
        {
            verdict = failed ? AttemptVerdict.Failed : AttemptVerdict.Passed;
        }
        else
        {
            verdict = attempts.Decide(Remote, failed, out TimeSpan retryAfter);
            RetryAfter = retryAfter;
        }

        _decided = verdict;
        return verdict;
    }

    /// <summary>Gives back the count a right answer took with <see cref="Decide"/>.</summary>
    public void Refund()
    {
        if (attempts is not null && Remote is not null)
        {
            attempts.Refund(Remote);
        }

        _decided = AttemptVerdict.Passed;
    }

    private static string? HeaderSafe(string? value)
    {
        if (value is null || value.Length is 0 or > 256)
        {
            return null;
        }

        foreach (char c in value)
        {
            if (c < 0x20 || c == 0x7F)
            {
                return null;
            }
        }

        return value;
    }

    /// <summary>The outcome of a rule's check that ends in <paramref name="verdict"/>.</summary>
    public static CredentialOutcome Outcome(AttemptVerdict verdict) => verdict switch
    {
        AttemptVerdict.Blocked => CredentialOutcome.Blocked,
        AttemptVerdict.Failed => CredentialOutcome.Wrong,
        _ => CredentialOutcome.Accepted,
    };
}
