using Microsoft.Extensions.Configuration;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>What an <c>Oidc</c> entry of the credentials file says.</summary>
/// <param name="KeysDirectory">Where the Data Protection keys live; every node of a cluster names the same (shared) directory.</param>
/// <param name="UserInfo">True: the claims come from the provider's userinfo endpoint too, not only from the ID token.</param>
public sealed record OidcSettings(
    string Authority, string ClientId, string ClientSecret,
    IReadOnlySet<string> Emails, IReadOnlySet<string> EmailDomains, string? ClaimName, IReadOnlySet<string> ClaimValues,
    IReadOnlyList<string> Scopes, TimeSpan CookieLifetime, string? KeysDirectory, bool UserInfo)
{
    /// <summary>The <c>Oidc</c> section of a <c>Visitors</c> entry; null when it has none, or when it is wrong (said in the problems).</summary>
    public static OidcSettings? FromFile(IConfigurationSection entry, string where, List<string> problems)
    {
        var oidc = new RuleSection(entry.GetSection("Oidc"), where, problems);
        if (!oidc.Exists)
        {
            return null;
        }

        if (!ProviderAddress.TryParse(oidc["Authority"], out _))
        {
            oidc.Problem("Oidc:Authority must be the provider's https URL (its issuer; http only on a loopback address).");
        }

        if (string.IsNullOrWhiteSpace(oidc["ClientId"]) || string.IsNullOrWhiteSpace(oidc["ClientSecret"]))
        {
            oidc.Problem("Oidc:ClientId and Oidc:ClientSecret are the tunnel's client at the provider (register …/.tunnel2/oidc/callback as its redirect URI).");
        }

        (HashSet<string> emails, HashSet<string> domains, string? claim, HashSet<string> values) = AllowLists(oidc);
        int minutes = oidc.WholeNumber("CookieMinutes", 480, 1, 43200);
        HashSet<string> scopes = oidc.Strings("Scopes");
        scopes.UnionWith(["openid", "email"]);
        if (claim is not null && oidc["AllowedClaim:Scope"] is { } claimScope)
        {
            scopes.Add(claimScope);
        }

        return oidc.HasProblems ? null : new OidcSettings(oidc["Authority"]!, oidc["ClientId"]!, oidc["ClientSecret"]!, emails, domains, claim, values,
            [.. scopes], TimeSpan.FromMinutes(minutes), oidc["KeysDirectory"], string.Equals(oidc["UserInfo"], "true", StringComparison.OrdinalIgnoreCase));
    }

    private static (HashSet<string> Emails, HashSet<string> Domains, string? Claim, HashSet<string> Values) AllowLists(RuleSection oidc)
    {
        HashSet<string> emails = oidc.Strings("AllowedEmails"), domains = oidc.Strings("AllowedEmailDomains");
        string? claim = oidc["AllowedClaim:Name"];
        HashSet<string> values = oidc.Strings("AllowedClaim:Values");
        if (emails.Count == 0 && domains.Count == 0 && claim is null)
        {
            oidc.Problem("Oidc needs an allow list (AllowedEmails, AllowedEmailDomains or AllowedClaim): without one any account at the provider would get in.");
        }

        if (claim is not null && values.Count == 0)
        {
            oidc.Problem($"Oidc:AllowedClaim:Values must list the values of {claim} that may visit.");
        }

        return (emails, domains, claim, values);
    }
}
