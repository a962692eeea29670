using System.Globalization;
using Microsoft.IdentityModel.Tokens;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// Why Microsoft.IdentityModel refused a token, in words for the visitor's 401 and the log: a bearer JWT
/// (<see cref="JwtRule"/>) and the ID token at a login's callback (<see cref="OidcRule"/>) are refused the same way.
/// </summary>
internal static class TokenProblem
{
    public static string Describe(Exception? error) => error switch
    {
        SecurityTokenExpiredException expired => $"The token expired at {expired.Expires.ToString("u", CultureInfo.InvariantCulture)}.",
        SecurityTokenNotYetValidException => "The token is not valid yet.",
        SecurityTokenNoExpirationException => "The token has no expiry (exp).",
        SecurityTokenInvalidIssuerException => "The token's issuer is not the one this session trusts.",
        SecurityTokenInvalidAudienceException => "The token's audience is not this session's.",
        SecurityTokenSignatureKeyNotFoundException => "The token is signed by a key the issuer does not publish.",
        SecurityTokenInvalidSignatureException when error.Message.Contains("IDX10504", StringComparison.Ordinal)
            => "The token is not signed (alg: none is never accepted).",
        SecurityTokenInvalidSignatureException => "The token's signature is wrong.",
        SecurityTokenInvalidAlgorithmException => "The token's algorithm is not accepted.",
        SecurityTokenMalformedException => "The bearer token is not a well-formed JWT.",
        InvalidOperationException or HttpRequestException => "The issuer's keys could not be fetched; try again later.",
        _ => "The token was not accepted.",
    };
}
