using System.Globalization;
using Microsoft.IdentityModel.Tokens;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// Why Microsoft.IdentityModel refused a token, in words for the visitor's 401 and the log: a bearer JWT
/// (<see cref="JwtRule"/>) and the ID token at a login's callback (<see cref="OidcRule"/>) are refused the same way.
/// </summary>
internal static class TokenProblem
{
    public static string Describe(Exception? error) => Of(error).Detail;

    /// <summary>The refusal as a short reason for the log, the visitor's detail, and what the operator may do about it.</summary>
    public static TokenRefusal Of(Exception? error) => error switch
    {
        SecurityTokenExpiredException expired => new("expired",
            $"The token expired at {expired.Expires.ToString("u", CultureInfo.InvariantCulture)}.",
            "the caller must fetch a new token from the issuer (raise Jwt:ClockSkewSeconds only for clocks that drift)"),
        SecurityTokenNotYetValidException => new("not-yet-valid", "The token is not valid yet.",
            "check the clocks of the issuer and this server (Jwt:ClockSkewSeconds is the leeway)"),
        SecurityTokenNoExpirationException => new("no-expiry", "The token has no expiry (exp).",
            "the issuer must put an exp in its tokens"),
        SecurityTokenInvalidIssuerException => new("wrong-issuer", "The token's issuer is not the one this session trusts.",
            "the token's iss must equal the entry's Jwt:Issuer; fix Jwt:Issuer or have the caller use that issuer"),
        SecurityTokenInvalidAudienceException => new("wrong-audience", "The token's audience is not this session's.",
            "the caller must ask its issuer for a token whose aud is the entry's Jwt:Audience"),
        SecurityTokenSignatureKeyNotFoundException => new("unknown-key", "The token is signed by a key the issuer does not publish.",
            "the key set at Jwt:JwksUrl (or the issuer's discovery document) lacks the token's kid; check that it is the issuer's"),
        SecurityTokenInvalidSignatureException when error.Message.Contains("IDX10504", StringComparison.Ordinal)
            => new("alg-none", "The token is not signed (alg: none is never accepted).", "the caller must send a token its issuer signed"),
        SecurityTokenInvalidSignatureException => new("bad-signature", "The token's signature is wrong.",
            "the token was altered or signed by another key; the caller must send one its issuer signed"),
        SecurityTokenInvalidAlgorithmException => new("bad-algorithm", "The token's algorithm is not accepted.",
            "the issuer must sign with an asymmetric algorithm its key set publishes"),
        SecurityTokenMalformedException => new("malformed", "The bearer token is not a well-formed JWT.",
            "the caller must send the JWT itself after 'Bearer '"),
        InvalidOperationException or HttpRequestException => new("keys-unavailable", "The issuer's keys could not be fetched; try again later.",
            "check that this server reaches Jwt:JwksUrl (or the issuer's discovery document)"),
        _ => new("refused", "The token was not accepted.", "check the token against the entry's Jwt settings"),
    };
}
