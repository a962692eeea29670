using System.Net;
using System.Text;
using Microsoft.AspNetCore.Http;
using Microsoft.Net.Http.Headers;
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
}

/// <summary>
/// Who may visit the sessions a pattern matches: addresses (deny list first, then the allow list if it has entries;
/// CIDR, IPv4 and IPv6) and then, if any are set, credentials: basic auth (user → bcrypt hash) or an API key (SHA-256
/// hash), sent as <c>Authorization: Bearer &lt;key&gt;</c> or <c>X-Api-Key: &lt;key&gt;</c>.
/// </summary>
public sealed class VisitorPolicy
{
    public const string ApiKeyHeader = "X-Api-Key";

    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    public VisitorPolicy(
        SessionPattern sessions,
        IReadOnlyDictionary<string, PasswordHash> users,
        IReadOnlyList<byte[]> apiKeys,
        IReadOnlyList<IPNetwork> allow,
        IReadOnlyList<IPNetwork> deny)
    {
        Sessions = sessions;
        Users = users;
        ApiKeys = apiKeys;
        Allow = allow;
        Deny = deny;
    }

    public SessionPattern Sessions { get; }

    public IReadOnlyDictionary<string, PasswordHash> Users { get; }

    public IReadOnlyList<byte[]> ApiKeys { get; }

    public IReadOnlyList<IPNetwork> Allow { get; }

    public IReadOnlyList<IPNetwork> Deny { get; }

    public bool WantsCredentials => Users.Count > 0 || ApiKeys.Count > 0;

    /// <param name="remote">The visitor's address: the connection's, or the one trusted proxies forwarded.</param>
    /// <param name="attempts">
    /// Failed attempts per address, one decision per request: an address out of them gets
    /// <see cref="VisitorVerdict.TooManyAttempts"/> whatever it sends; a wrong API key is counted with its (cheap) check;
    /// a password not verified before takes its count before bcrypt runs and gets it back when right, so concurrent
    /// guesses from one address cannot run more checks than it is allowed. Null: no limit.
    /// </param>
    /// <param name="credentialsHeader">The header that carried the accepted credentials, for the caller to take off.</param>
    /// <param name="retryAfter">With <see cref="VisitorVerdict.TooManyAttempts"/>: when the address has an attempt again.</param>
    public VisitorVerdict Check(HttpRequest request, IPAddress? remote, FailedAttempts? attempts, out string? credentialsHeader, out TimeSpan retryAfter)
    {
        credentialsHeader = null;
        retryAfter = TimeSpan.Zero;
        if (!AllowsAddress(remote))
        {
            return VisitorVerdict.AddressDenied;
        }

        if (!WantsCredentials)
        {
            return VisitorVerdict.Allowed;
        }

        string? authorization = request.Headers.Authorization.Count == 1 ? request.Headers.Authorization[0] : null;
        string? apiKey = request.Headers[ApiKeyHeader].Count == 1 ? request.Headers[ApiKeyHeader][0] : null;
        var judge = new AttemptJudge(attempts, remote);
        VisitorVerdict verdict;
        if (authorization is null && apiKey is null)
        {
            verdict = judge.Decide(failed: false) == AttemptVerdict.Blocked ? VisitorVerdict.TooManyAttempts : VisitorVerdict.CredentialsMissing;
        }
        else if (apiKey is null && authorization!.StartsWith("Basic ", StringComparison.OrdinalIgnoreCase))
        {
            verdict = CheckUser(authorization.AsSpan(6).Trim(), ref judge);
        }
        else
        {
            bool right = apiKey is not null ? IsApiKey(apiKey)
                : authorization!.StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase) && IsApiKey(authorization.AsSpan(7).Trim());
            verdict = AttemptJudge.Verdict(judge.Decide(failed: !right));
        }

        retryAfter = judge.RetryAfter;
        if (verdict != VisitorVerdict.Allowed)
        {
            return verdict;
        }

        credentialsHeader = apiKey is not null ? ApiKeyHeader : HeaderNames.Authorization;
        return VisitorVerdict.Allowed;
    }

    /// <summary>The <c>WWW-Authenticate</c> challenges a 401 carries: Basic if the session has users, Bearer if it has keys.</summary>
    public string[] Challenges(string session)
    {
        var challenges = new List<string>(2);
        if (Users.Count > 0)
        {
            challenges.Add($"Basic realm=\"{session}\", charset=\"UTF-8\"");
        }

        if (ApiKeys.Count > 0)
        {
            challenges.Add("Bearer");
        }

        return [.. challenges];
    }

    /// <summary>The address rules alone (deny first, then a non-empty allow list): what a raw TCP caller is checked against too.</summary>
    public bool AllowsAddress(IPAddress? remote)
    {
        if (Allow.Count == 0 && Deny.Count == 0)
        {
            return true;
        }

        if (remote is null)
        {
            return false;
        }

        IPAddress address = remote.IsIPv4MappedToIPv6 ? remote.MapToIPv4() : remote;
        return !Contains(Deny, address) && (Allow.Count == 0 || Contains(Allow, address));
    }

    private static bool Contains(IReadOnlyList<IPNetwork> networks, IPAddress address)
    {
        for (int i = 0; i < networks.Count; i++)
        {
            if (networks[i].Contains(address))
            {
                return true;
            }
        }

        return false;
    }

    private bool IsApiKey(ReadOnlySpan<char> key) => ApiKeys.Count > 0 && key.Length > 0 && TokenHash.IndexOf(TokenHash.Of(key), ApiKeys) >= 0;

    private VisitorVerdict CheckUser(ReadOnlySpan<char> encoded, ref AttemptJudge judge)
    {
        Span<byte> decoded = encoded.Length <= 1024 ? stackalloc byte[encoded.Length] : new byte[encoded.Length];
        string pair;
        try
        {
            if (Users.Count == 0 || !Convert.TryFromBase64Chars(encoded, decoded, out int written))
            {
                return AttemptJudge.Verdict(judge.Decide(failed: true));
            }

            pair = StrictUtf8.GetString(decoded[..written]);
        }
        catch (DecoderFallbackException)
        {
            return AttemptJudge.Verdict(judge.Decide(failed: true));
        }

        int colon = pair.IndexOf(':', StringComparison.Ordinal);
        string user = colon > 0 ? pair[..colon] : string.Empty;
        string password = colon > 0 ? pair[(colon + 1)..] : string.Empty;
        PasswordHash? hash = colon > 0 && Users.TryGetValue(user, out PasswordHash? known) ? known : null;
        if (hash is not null && hash.IsRemembered(user, password))
        {
            return AttemptJudge.Verdict(judge.Decide(failed: false)); // no bcrypt, no count; refused all the same while blocked
        }

        // Counted before the check, whatever its outcome, so concurrent guesses cannot outrun the count; given back if right.
        if (judge.Decide(failed: true) == AttemptVerdict.Blocked)
        {
            return VisitorVerdict.TooManyAttempts;
        }

        if (hash is not null && hash.Verify(user, password))
        {
            judge.Refund();
            return VisitorVerdict.Allowed;
        }

        return VisitorVerdict.CredentialsWrong;
    }

    /// <summary>One request's attempt against the failed-attempt limit of its address (none without an address or a limit).</summary>
    private struct AttemptJudge(FailedAttempts? attempts, IPAddress? remote)
    {
        public TimeSpan RetryAfter;

        public AttemptVerdict Decide(bool failed) =>
            attempts is null || remote is null ? (failed ? AttemptVerdict.Failed : AttemptVerdict.Passed) : attempts.Decide(remote, failed, out RetryAfter);

        public readonly void Refund()
        {
            if (attempts is not null && remote is not null)
            {
                attempts.Refund(remote);
            }
        }

        public static VisitorVerdict Verdict(AttemptVerdict attempt) => attempt switch
        {
            AttemptVerdict.Blocked => VisitorVerdict.TooManyAttempts,
            AttemptVerdict.Failed => VisitorVerdict.CredentialsWrong,
            _ => VisitorVerdict.Allowed,
        };
    }
}
