using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Tunnel2.Hosting.Configuration;

/// <summary>
/// Configuration keys that moved when the options were grouped by concern, kept working for one release: a value
/// under an old key (appsettings, environment variable, <c>--Section:Key=</c>) is copied to its new key unless the new
/// key is set too, and a warning names the new key. Switches (<c>--admin-url</c> …) did not change.
/// </summary>
public sealed class RenamedKeys
{
    private readonly KeyValuePair<string, string>[] _renames;

    /// <param name="renames">Old key → new key; an old key covers its subtree too (<c>ProxyEntry:Hosts</c> its hosts).</param>
    public RenamedKeys(IReadOnlyDictionary<string, string> renames) => _renames = [.. renames];

    /// <summary>The old keys, for the command line's check of the keys it knows.</summary>
    public IEnumerable<string> OldKeys => _renames.Select(rename => rename.Key);

    /// <summary>The new key of <paramref name="key"/> when it is an old one (or under one); else null.</summary>
    public string? NewKeyOf(string key)
    {
        foreach ((string old, string renamed) in _renames)
        {
            if (key.Equals(old, StringComparison.OrdinalIgnoreCase))
            {
                return renamed;
            }

            if (key.Length > old.Length && key[old.Length] == ':' && key.StartsWith(old, StringComparison.OrdinalIgnoreCase))
            {
                return renamed + key[old.Length..];
            }
        }

        return null;
    }

    /// <summary>
    /// Copies the values of old keys in <paramref name="configuration"/> to their new keys (a new key set anywhere wins)
    /// and returns what was renamed, old key → new key, for <see cref="LogWarnings"/>.
    /// </summary>
    public IReadOnlyList<KeyValuePair<string, string>> Apply(IConfigurationManager configuration)
    {
        var values = new Dictionary<string, string?>(StringComparer.OrdinalIgnoreCase);
        var used = new List<KeyValuePair<string, string>>();
        IConfiguration current = (IConfiguration)configuration;
        foreach ((string key, string? value) in current.AsEnumerable())
        {
            if (value is null || NewKeyOf(key) is not { } newKey)
            {
                continue;
            }

            if (current[newKey] is null)
            {
                values[newKey] = value;
            }

            used.Add(new(key, newKey));
        }

        if (values.Count > 0)
        {
            configuration.AddInMemoryCollection(values);
        }

        return used;
    }

    /// <summary>One warning per old key found, naming its new key (as a key and as an environment variable).</summary>
    public static void LogWarnings(IServiceProvider services, IReadOnlyList<KeyValuePair<string, string>> renamed)
    {
        if (renamed.Count == 0)
        {
            return;
        }

        ILogger logger = services.GetRequiredService<ILoggerFactory>().CreateLogger("Tunnel2.Configuration");
        foreach ((string old, string renamedTo) in renamed)
        {
            RenamedKeysLog.Renamed(logger, old, renamedTo, renamedTo.Replace(":", "__", StringComparison.Ordinal));
        }
    }
}

internal static partial class RenamedKeysLog
{
    [LoggerMessage(EventId = 900, Level = LogLevel.Warning,
        Message = "Configuration key {OldKey} is deprecated and will stop working in the next release: use {NewKey} (environment variable {NewVariable}).")]
    public static partial void Renamed(ILogger logger, string oldKey, string newKey, string newVariable);
}
