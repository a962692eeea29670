using System.Collections;
using System.Globalization;
using System.Reflection;
using System.Xml.Linq;

namespace Tunnel2.UnitTests.Configuration.Reference;

/// <summary>
/// Every key of an options type, read from the type itself: its properties (a sub-object is a group), their doc
/// comments, their defaults (a default-constructed object's values) and the switches that set them.
/// </summary>
public static class OptionsCatalog
{
    /// <param name="section">The configuration section the type binds, e.g. <c>TunnelServer</c>.</param>
    /// <param name="switches">The executable's switch mappings (switch → key).</param>
    public static IReadOnlyList<OptionGroup> Groups(Type options, string section, IReadOnlyDictionary<string, string> switches, XmlDocs docs)
    {
        var switchOf = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach ((string name, string key) in switches)
        {
            switchOf[key.EndsWith(":0", StringComparison.Ordinal) ? key[..^2] + ":<n>" : key] = name;
        }

        object defaults = Activator.CreateInstance(options)!;
        var own = new List<OptionEntry>();
        var groups = new List<OptionGroup> { new(section, docs.Summary(options), own) };
        foreach (PropertyInfo property in Settable(options))
        {
            if (IsGroup(property.PropertyType))
            {
                string group = $"{section}:{property.Name}";
                var entries = new List<OptionEntry>();
                AddLeaves(property.PropertyType, property.GetValue(defaults)!, group, group, entries, switchOf, docs);
                groups.Add(new OptionGroup(group, docs.Summary(property.PropertyType) ?? docs.Summary(property), entries));
            }
            else
            {
                AddLeaf(property, defaults, section, section, own, switchOf, docs);
            }
        }

        return groups;
    }

    private static void AddLeaves(Type type, object defaults, string prefix, string group, List<OptionEntry> entries,
        Dictionary<string, string> switchOf, XmlDocs docs)
    {
        foreach (PropertyInfo property in Settable(type))
        {
            if (IsGroup(property.PropertyType))
            {
                AddLeaves(property.PropertyType, property.GetValue(defaults)!, $"{prefix}:{property.Name}", group, entries, switchOf, docs);
            }
            else
            {
                AddLeaf(property, defaults, prefix, group, entries, switchOf, docs);
            }
        }
    }

    private static void AddLeaf(PropertyInfo property, object defaults, string prefix, string group, List<OptionEntry> entries,
        Dictionary<string, string> switchOf, XmlDocs docs)
    {
        string key = $"{prefix}:{property.Name}{Placeholder(property.PropertyType)}";
        XElement summary = docs.Summary(property)
            ?? throw new InvalidOperationException($"{key} ({property.DeclaringType!.Name}.{property.Name}) has no <summary>: document it once, in the code.");
        entries.Add(new OptionEntry(key, group, switchOf.GetValueOrDefault(key), Format(property.GetValue(defaults)), summary)
        {
            Values = EnumValues(Nullable.GetUnderlyingType(property.PropertyType) ?? property.PropertyType, docs),
        });
    }

    private static List<EnumValue> EnumValues(Type type, XmlDocs docs)
    {
        var values = new List<EnumValue>();
        if (type.IsEnum)
        {
            foreach (FieldInfo field in type.GetFields(BindingFlags.Public | BindingFlags.Static))
            {
                values.Add(new EnumValue(field.Name, docs.Summary(field)));
            }
        }

        return values;
    }

    private static IEnumerable<PropertyInfo> Settable(Type type) =>
        type.GetProperties(BindingFlags.Public | BindingFlags.Instance).Where(property => property.SetMethod?.IsPublic == true); // what the binder sets

    /// <summary>A sub-object of the options (bound key by key), as opposed to a value or a collection.</summary>
    private static bool IsGroup(Type type) =>
        type.IsClass && type != typeof(string) && !typeof(IEnumerable).IsAssignableFrom(type);

    private static string Placeholder(Type type) => type switch
    {
        _ when type.IsGenericType && type.GetGenericTypeDefinition() == typeof(Dictionary<,>) =>
            type.GetGenericArguments()[1] == typeof(string) ? ":<host>" : ":<id>:…",
        _ when type.IsGenericType && type.GetGenericTypeDefinition() == typeof(List<>) => ":<n>",
        _ => "",
    };

    private static string Format(object? value) => value switch
    {
        null => "none",
        string { Length: 0 } => "none",
        string text => text,
        bool flag => flag ? "true" : "false",
        TimeSpan time => time.ToString(time.Ticks % TimeSpan.TicksPerSecond == 0 ? "c" : @"hh\:mm\:ss\.fff", CultureInfo.InvariantCulture),
        ICollection { Count: 0 } => "none",
        IFormattable number => number.ToString(null, CultureInfo.InvariantCulture),
        _ => value.ToString() ?? "none",
    };
}
