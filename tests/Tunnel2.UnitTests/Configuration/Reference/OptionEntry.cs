using System.Xml.Linq;

namespace Tunnel2.UnitTests.Configuration.Reference;

/// <summary>One configuration key as the reference lists it: where it is, its switch, its default and its doc comment.</summary>
/// <param name="Key">The full key, e.g. <c>TunnelServer:Uplink:MaxStreams</c> (<c>&lt;host&gt;</c> for a dictionary's own keys).</param>
/// <param name="Group">The section and first-level group it is listed under, e.g. <c>TunnelServer:Uplink</c>.</param>
/// <param name="Switch">Its command-line switch, or null.</param>
/// <param name="Default">Its default, read from a default-constructed options object.</param>
/// <param name="Summary">Its XML doc comment's summary.</param>
public sealed record OptionEntry(string Key, string Group, string? Switch, string Default, XElement Summary)
{
    /// <summary>For an enum-typed key, its values with their own doc comments, listed after the summary: documented once, on the enum.</summary>
    public IReadOnlyList<EnumValue> Values { get; init; } = [];
}

/// <summary>One value an enum-typed key takes, and its doc comment's summary (null when it has none).</summary>
public sealed record EnumValue(string Name, XElement? Summary);

/// <summary>A group of keys: a section's own keys (<c>TunnelServer</c>) or a sub-object's (<c>TunnelServer:Uplink</c>).</summary>
public sealed record OptionGroup(string Name, XElement? Summary, IReadOnlyList<OptionEntry> Options);
