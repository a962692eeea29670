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
    /// Failed attempts per address: a wrong API key counts after its (cheap) check; a password not verified before takes
    /// its count before bcrypt runs, so that concurrent guesses from one address cannot run more checks than it is
    /// allowed. Null: no limit.
    /// </param>
    /// <param name="credentialsHeader">The header that carried the accepted credentials, for the caller to take off.</param>
    public VisitorVerdict Check(HttpRequest request, IPAddress? remote, FailedAttempts? attempts, out string? credentialsHeader)
    {
        credentialsHeader = null;
        if (Allow.Count > 0 || Deny.Count > 0)
        {
            if (remote is null)
            {
                return VisitorVerdict.AddressDenied;
            }

            IPAddress address = remote.IsIPv4MappedToIPv6 ? remote.MapToIPv4() : remote;
            if (Contains(Deny, address) || (Allow.Count > 0 && !Contains(Allow, address)))
            {
                return VisitorVerdict.AddressDenied;
            }
        }

        if (!WantsCredentials)
        {
            return VisitorVerdict.Allowed;
        }

        string? authorization = request.Headers.Authorization.Count == 1 ? request.Headers.Authorization[0] : null;
        string? apiKey = request.Headers[ApiKeyHeader].Count == 1 ? request.Headers[ApiKeyHeader][0] : null;
        if (authorization is null && apiKey is null)
        {
            return VisitorVerdict.CredentialsMissing;
        }

        VisitorVerdict verdict = apiKey is null && authorization!.StartsWith("Basic ", StringComparison.OrdinalIgnoreCase)
            ? CheckUser(authorization.AsSpan(6).Trim(), remote, attempts)
            : (apiKey is not null ? IsApiKey(apiKey)
                : authorization!.StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase) && IsApiKey(authorization.AsSpan(7).Trim()))
                ? VisitorVerdict.Allowed
                : Counted(remote, attempts);
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

    private static VisitorVerdict Counted(IPAddress? remote, FailedAttempts? attempts)
    {
        if (remote is not null)
        {
            attempts?.TryCount(remote);
        }

        return VisitorVerdict.CredentialsWrong;
    }

    private VisitorVerdict CheckUser(ReadOnlySpan<char> encoded, IPAddress? remote, FailedAttempts? attempts)
    {
        Span<byte> decoded = encoded.Length <= 1024 ? stackalloc byte[encoded.Length] : new byte[encoded.Length];
        string pair;
        try
        {
            if (Users.Count == 0 || !Convert.TryFromBase64Chars(encoded, decoded, out int written))
            {
                return Counted(remote, attempts);
            }

            pair = StrictUtf8.GetString(decoded[..written]);
        }
        catch (DecoderFallbackException)
        {
            return Counted(remote, attempts);
        }

        int colon = pair.IndexOf(':', StringComparison.Ordinal);
        string user = colon > 0 ? pair[..colon] : string.Empty;
        string password = colon > 0 ? pair[(colon + 1)..] : string.Empty;
        PasswordHash? hash = colon > 0 && Users.TryGetValue(user, out PasswordHash? known) ? known : null;
        if (hash is not null && hash.IsRemembered(user, password))
        {
            return VisitorVerdict.Allowed;
        }

        // Counted before the check, whatever its outcome: concurrent guesses cannot outrun the count.
        if (remote is not null && attempts is not null && !attempts.TryCount(remote))
        {
            return VisitorVerdict.TooManyAttempts;
        }

        return hash is not null && hash.Verify(user, password) ? VisitorVerdict.Allowed : VisitorVerdict.CredentialsWrong;
    }
}
