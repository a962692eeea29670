using System.Globalization;
using Microsoft.Extensions.Configuration;
using Tunnel2.Hosting;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// One rule's section of a <c>Visitors</c> entry (<c>"Jwt": { … }</c>, <c>"Oidc": { … }</c>), read the one way every
/// rule reads its keys: URLs as <see cref="HttpUrl"/> and <see cref="ProviderAddress"/> take them, whole numbers within
/// bounds, lists of strings; each problem named with where it is (<c>Visitors (lab-*): Jwt:ClockSkewSeconds …</c>).
/// </summary>
internal sealed class RuleSection(IConfigurationSection section, string where, List<string> problems)
{
    private readonly int _problemsBefore = problems.Count;

    /// <summary>The section's name in the file (<c>Jwt</c>, <c>Oidc</c>).</summary>
    public string Name => section.Key;

    public bool Exists => section.Exists();

    /// <summary>True once a read of this section found something wrong: the rule is not made.</summary>
    public bool HasProblems => problems.Count > _problemsBefore;

    public string? this[string key] => section[key];

    /// <summary>Adds a problem, prefixed with where the entry is.</summary>
    public void Problem(string text) => problems.Add($"{where}: {text}");

    /// <summary>An absolute http(s) URL, or null (and the problem <paramref name="what"/>) when the key holds anything else.</summary>
    public Uri? Url(string key, string what)
    {
        if (HttpUrl.TryParse(section[key], out Uri? url))
        {
            return url;
        }

        Problem($"{Name}:{key} {what}");
        return null;
    }

    /// <summary>A whole number from <paramref name="min"/> to <paramref name="max"/>; <paramref name="fallback"/> when absent.</summary>
    public int WholeNumber(string key, int fallback, int min, int max)
    {
        string? text = section[key];
        if (text is null)
        {
            return fallback;
        }

        if (int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int value) && value >= min && value <= max)
        {
            return value;
        }

        Problem($"{Name}:{key} must be a whole number from {min} to {max}, not '{text}'.");
        return fallback;
    }

    /// <summary>The non-empty strings of a list (case-insensitive, as emails and domains are).</summary>
    public HashSet<string> Strings(string key) =>
        new(section.GetSection(key).GetChildren().Select(item => item.Value).OfType<string>().Where(value => value.Length > 0),
            StringComparer.OrdinalIgnoreCase);
}
