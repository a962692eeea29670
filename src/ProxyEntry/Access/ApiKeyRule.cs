using Microsoft.Extensions.Configuration;
using Microsoft.Net.Http.Headers;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// API keys, kept as SHA-256 hashes, sent as <c>Authorization: Bearer &lt;key&gt;</c> or <c>X-Api-Key: &lt;key&gt;</c>.
/// File: <c>"ApiKeys": [ "sha256:…" ]</c>.
/// </summary>
public sealed class ApiKeyRule(IReadOnlyList<byte[]> keys) : IVisitorRule
{
    public const string Header = "X-Api-Key";

    public static readonly VisitorRuleKind Kind = new("api-key", FromFile);

    public IReadOnlyList<byte[]> Keys { get; } = keys;

    string IVisitorRule.Kind => Kind.Name;

    public bool WantsCredentials => true;

    public string Asks => "an API key (Authorization: Bearer <key>, or X-Api-Key: <key>)";

    public string Challenge(string session, VisitorCheck? check) => "Bearer";

    /// <remarks>A wrong key is left for the policy to count (another rule, a JWT, may still take the bearer token).</remarks>
    public ValueTask<CredentialOutcome> CheckAsync(VisitorCheck check)
    {
        string? apiKey = check.Request.Headers[Header].Count == 1 ? check.Request.Headers[Header][0] : null;
        string? authorization = check.Request.Headers.Authorization.Count == 1 ? check.Request.Headers.Authorization[0] : null;
        ReadOnlySpan<char> presented;
        string header;
        if (apiKey is not null)
        {
            presented = apiKey;
            header = Header;
        }
        else if (authorization is not null && authorization.StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase))
        {
            presented = authorization.AsSpan(7).Trim();
            header = HeaderNames.Authorization;
        }
        else
        {
            return ValueTask.FromResult(CredentialOutcome.Absent);
        }

        if (presented.Length == 0 || TokenHash.IndexOf(TokenHash.Of(presented), Keys) < 0)
        {
            return ValueTask.FromResult(CredentialOutcome.Wrong);
        }

        check.CredentialsHeader = header;
        return ValueTask.FromResult(CredentialOutcome.Accepted);
    }

    private static ApiKeyRule? FromFile(IConfigurationSection entry, string where, List<string> problems)
    {
        var keys = new List<byte[]>();
        foreach (IConfigurationSection key in entry.GetSection("ApiKeys").GetChildren())
        {
            if (TokenHash.TryParse(key.Value, out byte[] keyHash))
            {
                keys.Add(keyHash);
            }
            else
            {
                problems.Add($"{where}: ApiKeys[{key.Key}] must be 'sha256:' and 64 hex digits (TunnelServer hash-token).");
            }
        }

        return keys.Count == 0 ? null : new ApiKeyRule(keys);
    }
}
