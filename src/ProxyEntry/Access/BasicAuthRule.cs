using System.Text;
using Microsoft.Extensions.Configuration;
using Microsoft.Net.Http.Headers;
using Tunnel2.Protocol.Handshake;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// Basic auth: user → bcrypt hash (what <c>htpasswd -B</c> writes). File: <c>"Users": { "alice": "$2y$10$…" }</c>; login:
/// <see cref="HandshakeProtocol.VisitorBasicHeader"/> (<c>user:bcrypt-hash</c>).
/// </summary>
public sealed class BasicAuthRule(IReadOnlyDictionary<string, PasswordHash> users) : IVisitorRule
{
    public static readonly VisitorRuleKind Kind = new("basic", FromFile, FromLogin);

    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    public IReadOnlyDictionary<string, PasswordHash> Users { get; } = users;

    string IVisitorRule.Kind => Kind.Name;

    public bool WantsCredentials => true;

    public string Asks => "a user name and password (basic auth)";

    public string Challenge(string session, VisitorCheck? check) => $"Basic realm=\"{session}\", charset=\"UTF-8\"";

    public ValueTask<CredentialOutcome> CheckAsync(VisitorCheck check)
    {
        string? authorization = check.Request.Headers.Authorization.Count == 1 ? check.Request.Headers.Authorization[0] : null;
        if (authorization is null || !authorization.StartsWith("Basic ", StringComparison.OrdinalIgnoreCase))
        {
            return ValueTask.FromResult(CredentialOutcome.Absent);
        }

        CredentialOutcome outcome = CheckUser(authorization.AsSpan(6).Trim(), check);
        if (outcome == CredentialOutcome.Accepted)
        {
            check.CredentialsHeader = HeaderNames.Authorization;
        }

        return ValueTask.FromResult(outcome);
    }

    private CredentialOutcome CheckUser(ReadOnlySpan<char> encoded, VisitorCheck check)
    {
        Span<byte> decoded = encoded.Length <= 1024 ? stackalloc byte[encoded.Length] : new byte[encoded.Length];
        string pair;
        try
        {
            if (!Convert.TryFromBase64Chars(encoded, decoded, out int written))
            {
                return VisitorCheck.Outcome(check.Decide(failed: true));
            }

            pair = StrictUtf8.GetString(decoded[..written]);
        }
        catch (DecoderFallbackException)
        {
            return VisitorCheck.Outcome(check.Decide(failed: true));
        }

        int colon = pair.IndexOf(':', StringComparison.Ordinal);
        string user = colon > 0 ? pair[..colon] : string.Empty;
        string password = colon > 0 ? pair[(colon + 1)..] : string.Empty;
        PasswordHash? hash = colon > 0 && Users.TryGetValue(user, out PasswordHash? known) ? known : null;
        if (hash is not null && hash.IsRemembered(user, password))
        {
            return VisitorCheck.Outcome(check.Decide(failed: false)); // no bcrypt, no count; refused all the same while blocked
        }

        // Counted before the check, whatever its outcome, so concurrent guesses cannot outrun the count; given back if right.
        if (check.Decide(failed: true) == AttemptVerdict.Blocked)
        {
            return CredentialOutcome.Blocked;
        }

        if (hash is not null && hash.Verify(user, password))
        {
            check.Refund();
            check.User = user;
            return CredentialOutcome.Accepted;
        }

        return CredentialOutcome.Wrong;
    }

    private static BasicAuthRule? FromFile(IConfigurationSection entry, string where, List<string> problems)
    {
        var users = new Dictionary<string, PasswordHash>(StringComparer.Ordinal);
        foreach (IConfigurationSection user in entry.GetSection("Users").GetChildren())
        {
            if (PasswordHash.TryParse(user.Value, out PasswordHash? password))
            {
                users[user.Key] = password!;
            }
            else
            {
                problems.Add($"{where}: Users:{user.Key} must be a bcrypt hash of cost 04 to {PasswordHash.MaxWorkFactor} ($2y$10$…, from htpasswd -nbB or TunnelServer hash-password).");
            }
        }

        return users.Count == 0 ? null : new BasicAuthRule(users);
    }

    private static BasicAuthRule? FromLogin(Func<string, string?> header, List<string> problems)
    {
        string? basic = header(HandshakeProtocol.VisitorBasicHeader);
        if (basic is null)
        {
            return null;
        }

        int colon = basic.IndexOf(':', StringComparison.Ordinal);
        if (colon <= 0 || !PasswordHash.TryParse(basic[(colon + 1)..], out PasswordHash? hash))
        {
            problems.Add($"{HandshakeProtocol.VisitorBasicHeader} must be user:bcrypt-hash, of cost 04 to {PasswordHash.MaxWorkFactor}.");
            return null;
        }

        return new BasicAuthRule(new Dictionary<string, PasswordHash>(StringComparer.Ordinal) { [basic[..colon]] = hash! });
    }
}
