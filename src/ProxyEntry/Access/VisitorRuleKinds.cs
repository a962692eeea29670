using Microsoft.Extensions.Configuration;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// One kind of visitor rule: its name and its parses, from an entry of the credentials file's <c>Visitors</c> and (for
/// the kinds a client may declare) from the login's headers. Each parse returns null when its keys are absent, and adds
/// what is wrong to the problems, saying where.
/// </summary>
public sealed record VisitorRuleKind(
    string Name,
    Func<IConfigurationSection, string, List<string>, IVisitorRule?> FromFile,
    Func<Func<string, string?>, List<string>, IVisitorRule?>? FromLogin = null);

/// <summary>Every rule kind, in the order a policy checks them: adding a kind is its class and a line here.</summary>
public static class VisitorRuleKinds
{
    public static readonly IReadOnlyList<VisitorRuleKind> All = [AddressRule.Kind, BasicAuthRule.Kind, ApiKeyRule.Kind, JwtRule.Kind, OidcRule.Kind];

    /// <summary>The rules one <c>Visitors</c> entry of the credentials file sets.</summary>
    public static List<IVisitorRule> FromFile(IConfigurationSection entry, string where, List<string> problems)
    {
        var rules = new List<IVisitorRule>();
        foreach (VisitorRuleKind kind in All)
        {
            if (kind.FromFile(entry, where, problems) is { } rule)
            {
                rules.Add(rule);
            }
        }

        return rules;
    }

    /// <summary>The rules a client declared in its login's headers (<paramref name="header"/> reads one, null when absent).</summary>
    public static List<IVisitorRule> FromLogin(Func<string, string?> header, List<string> problems)
    {
        var rules = new List<IVisitorRule>();
        foreach (VisitorRuleKind kind in All)
        {
            if (kind.FromLogin?.Invoke(header, problems) is { } rule)
            {
                rules.Add(rule);
            }
        }

        return rules;
    }
}
