using System.Security.Cryptography;
using System.Text.Json;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;

namespace Tunnel2.Testing;

/// <summary>
/// A token issuer made by a test: RSA keys of its own, its key set (JWKS) as JSON, and tokens signed by any of its keys,
/// expired ones and unsigned (<c>alg: none</c>) ones included.
/// </summary>
public sealed class JwtIssuer : IDisposable
{
    private readonly List<(string Kid, RSA Key)> _keys = [];

    public JwtIssuer(string issuer)
    {
        Issuer = issuer;
        AddKey();
    }

    public string Issuer { get; }

    /// <summary>The key new tokens are signed with: the last one added.</summary>
    public string CurrentKid => _keys[^1].Kid;

    /// <summary>Adds a key and signs with it from now on (the key set publishes it too).</summary>
    public string AddKey()
    {
        string kid = "key-" + Guid.NewGuid().ToString("N")[..8];
        _keys.Add((kid, RSA.Create(2048)));
        return kid;
    }

    /// <summary>Drops every key but the current one from the published key set.</summary>
    public void DropOldKeys() => _keys.RemoveRange(0, _keys.Count - 1);

    /// <summary>The published key set (RFC 7517).</summary>
    public string Jwks() => JsonSerializer.Serialize(new
    {
        keys = _keys.Select(k =>
        {
            RSAParameters p = k.Key.ExportParameters(includePrivateParameters: false);
            return new Dictionary<string, string>
            {
                ["kty"] = "RSA",
                ["use"] = "sig",
                ["alg"] = "RS256",
                ["kid"] = k.Kid,
                ["n"] = Base64UrlEncoder.Encode(p.Modulus),
                ["e"] = Base64UrlEncoder.Encode(p.Exponent),
            };
        }),
    });

    /// <summary>A token for <paramref name="audience"/>, signed with the current key (or with a key nobody publishes).</summary>
    public string Token(string audience, string subject = "alice", string? email = "alice@example.com", TimeSpan? lifetime = null,
        string? issuer = null, bool unpublishedKey = false, DateTime? now = null)
    {
        DateTime issued = now ?? DateTime.UtcNow;
        TimeSpan life = lifetime ?? TimeSpan.FromMinutes(5);
        using RSA? stranger = unpublishedKey ? RSA.Create(2048) : null;
        var key = new RsaSecurityKey(stranger ?? _keys[^1].Key) { KeyId = unpublishedKey ? "unknown-key" : CurrentKid };
        var claims = new Dictionary<string, object> { ["sub"] = subject };
        if (email is not null)
        {
            claims["email"] = email;
        }

        return new JsonWebTokenHandler().CreateToken(new SecurityTokenDescriptor
        {
            Issuer = issuer ?? Issuer,
            Audience = audience,
            Claims = claims,
            IssuedAt = life < TimeSpan.Zero ? issued + life - TimeSpan.FromMinutes(1) : issued,
            NotBefore = life < TimeSpan.Zero ? issued + life - TimeSpan.FromMinutes(1) : issued,
            Expires = issued + life,
            SigningCredentials = new SigningCredentials(key, SecurityAlgorithms.RsaSha256),
        });
    }

    /// <summary>An unsigned token (<c>alg: none</c>) that would otherwise pass: right issuer and audience, not expired.</summary>
    public string UnsignedToken(string audience)
    {
        long now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        string header = Base64UrlEncoder.Encode("""{"alg":"none","typ":"JWT"}""");
        string payload = Base64UrlEncoder.Encode(JsonSerializer.Serialize(new Dictionary<string, object>
        {
            ["iss"] = Issuer,
            ["aud"] = audience,
            ["sub"] = "mallory",
            ["iat"] = now,
            ["nbf"] = now,
            ["exp"] = now + 300,
        }));
        return header + "." + payload + ".";
    }

    public void Dispose()
    {
        foreach ((_, RSA key) in _keys)
        {
            key.Dispose();
        }
    }
}
