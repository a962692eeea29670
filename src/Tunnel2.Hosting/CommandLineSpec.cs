using System.Diagnostics.CodeAnalysis;
using System.Reflection;

namespace Tunnel2.Hosting;

/// <summary>
/// What an executable's command line may hold, so that what it does not know is refused before the host starts: the
/// configuration's command-line source takes any <c>--key value</c> into configuration, where a mistyped
/// <c>--tokne</c> or <c>--TunnelServer:Tokn=…</c> was silently ignored. Known are the executable's switches, the
/// keys of its options sections (<c>--TunnelClient:Limits:MaxQueue=…</c>: every key in full, or the section and its
/// first key), keys of an earlier release (<see cref="Configuration.RenamedKeys"/>), the
/// sections that validate themselves (<c>Serilog</c>, <c>Logging</c>, <c>Kestrel</c>), and the host's own keys
/// (<c>--environment</c>, …). Every option needs a value, after <c>=</c> or as the next argument.
/// </summary>
public sealed class CommandLineSpec
{
    /// <summary>Sections whose keys are theirs to check (Serilog's and Microsoft's logging, Kestrel's endpoints and limits).</summary>
    private static readonly string[] OpenSections = ["Serilog", "Logging", "Kestrel"];

    /// <summary>The generic host's own keys, read from the command line by <c>Host.CreateApplicationBuilder</c>.</summary>
    private static readonly string[] HostKeys = ["environment", "applicationName", "contentRoot"];

    private readonly IReadOnlyDictionary<string, string> _switches;
    private readonly Dictionary<string, HashSet<string>> _sections = new(StringComparer.OrdinalIgnoreCase);
    private readonly HashSet<string> _keys = new(HostKeys, StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, (HashSet<string> Exact, List<string> Prefixes)> _fullKeys = new(StringComparer.OrdinalIgnoreCase);
    private Configuration.RenamedKeys? _renamed;

    /// <param name="switches">The executable's switch mappings (e.g. <c>--token</c> → <c>TunnelServer:Token</c>).</param>
    public CommandLineSpec(IReadOnlyDictionary<string, string> switches) =>
        _switches = new Dictionary<string, string>(switches, StringComparer.OrdinalIgnoreCase); // as the configuration source matches them

    /// <summary>An options section whose first-level keys are the public properties of <typeparamref name="TOptions"/>.</summary>
    public CommandLineSpec WithSection<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicProperties)] TOptions>(string section)
    {
        var keys = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        foreach (PropertyInfo property in typeof(TOptions).GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            keys.Add(property.Name);
        }

        _sections[section] = keys;
        return this;
    }

    /// <summary>
    /// Every key of the sections they name, in full (<c>TunnelServer:Uplink:MaxStreams</c>), so a mistyped key in a
    /// group is refused too; a placeholder ends a key whose own keys are free (<c>ProxyEntry:Routing:Hosts:&lt;host&gt;</c>).
    /// </summary>
    public CommandLineSpec WithKeys(IEnumerable<string> keys)
    {
        foreach (string key in keys)
        {
            string section = key[..key.IndexOf(':', StringComparison.Ordinal)];
            if (!_fullKeys.TryGetValue(section, out (HashSet<string> Exact, List<string> Prefixes) known))
            {
                known = (new HashSet<string>(StringComparer.OrdinalIgnoreCase), []);
                _fullKeys[section] = known;
            }

            int placeholder = key.IndexOf(":<", StringComparison.Ordinal);
            if (placeholder < 0)
            {
                known.Exact.Add(key);
            }
            else
            {
                known.Prefixes.Add(key[..(placeholder + 1)]);
            }
        }

        return this;
    }

    /// <summary>An options section with the keys given.</summary>
    public CommandLineSpec WithSection(string section, params string[] keys)
    {
        _sections[section] = new HashSet<string>(keys, StringComparer.OrdinalIgnoreCase);
        return this;
    }

    /// <summary>Keys that moved, still taken for one release (<see cref="Configuration.RenamedKeys"/>).</summary>
    public CommandLineSpec WithRenamedKeys(Configuration.RenamedKeys renamed)
    {
        _renamed = renamed;
        return this;
    }

    /// <summary>A top-level key the executable reads (e.g. <c>urls</c>).</summary>
    public CommandLineSpec WithKey(string key)
    {
        _keys.Add(key);
        return this;
    }

    /// <summary>What is wrong with <paramref name="args"/>, one line each; empty when nothing is.</summary>
    public List<string> Problems(IReadOnlyList<string> args)
    {
        var problems = new List<string>();
        for (int i = 0; i < args.Count; i++)
        {
            string argument = args[i];
            int equals = argument.IndexOf('=', StringComparison.Ordinal);
            string name = equals < 0 ? argument : argument[..equals];
            if (!argument.StartsWith('-'))
            {
                // The configuration source reads "Section:Key=value" without dashes too; anything else is not an option.
                if (equals <= 0)
                {
                    problems.Add($"unexpected argument '{argument}': options start with --");
                }
                else if (!IsKnownKey(name))
                {
                    problems.Add(Unknown(name));
                }

                continue;
            }

            bool known = _switches.ContainsKey(name) || (name.StartsWith("--", StringComparison.Ordinal) && IsKnownKey(name[2..]));
            if (!known)
            {
                problems.Add(Unknown(name));
            }

            if (equals < 0)
            {
                if (i + 1 >= args.Count || args[i + 1].StartsWith("--", StringComparison.Ordinal))
                {
                    problems.Add($"option '{name}' needs a value ('{name} <value>' or '{name}=<value>')");
                }
                else
                {
                    i++; // its value
                }
            }
        }

        return problems;
    }

    private bool IsKnownKey(string key)
    {
        if (_renamed?.NewKeyOf(key) is not null)
        {
            return true;
        }

        string[] parts = key.Split(':');
        if (parts.Length == 1)
        {
            return _keys.Contains(key);
        }

        if (_fullKeys.TryGetValue(parts[0], out (HashSet<string> Exact, List<string> Prefixes) full))
        {
            return full.Exact.Contains(key) || full.Prefixes.Exists(prefix => key.StartsWith(prefix, StringComparison.OrdinalIgnoreCase));
        }

        if (_sections.TryGetValue(parts[0], out HashSet<string>? keys))
        {
            return keys.Contains(parts[1]);
        }

        return Array.Exists(OpenSections, section => section.Equals(parts[0], StringComparison.OrdinalIgnoreCase));
    }

    private string Unknown(string name)
    {
        string? closest = null;
        int best = int.MaxValue;
        foreach (string known in _switches.Keys)
        {
            int distance = EditDistance(name, known);
            if (distance < best)
            {
                (closest, best) = (known, distance);
            }
        }

        return closest is not null && best <= 2
            ? $"unknown option '{name}'; did you mean '{closest}'?"
            : $"unknown option '{name}'";
    }

    /// <summary>Levenshtein distance, for the "did you mean" hint (a switch is a few dozen characters at most).</summary>
    private static int EditDistance(string a, string b)
    {
        var previous = new int[b.Length + 1];
        var current = new int[b.Length + 1];
        for (int j = 0; j <= b.Length; j++)
        {
            previous[j] = j;
        }

        for (int i = 1; i <= a.Length; i++)
        {
            current[0] = i;
            for (int j = 1; j <= b.Length; j++)
            {
                int substitution = previous[j - 1] + (char.ToLowerInvariant(a[i - 1]) == char.ToLowerInvariant(b[j - 1]) ? 0 : 1);
                current[j] = Math.Min(substitution, Math.Min(previous[j], current[j - 1]) + 1);
            }

            (previous, current) = (current, previous);
        }

        return previous[b.Length];
    }
}
