using System.Reflection;
using Tunnel2.UnitTests.Configuration.Reference;

namespace Tunnel2.UnitTests.Architecture;

/// <summary>
/// A ratchet on the namespace graph of <c>src/</c>: no new cycle may appear and no known one may grow. Each known cycle
/// is a strongly connected component (all the namespaces that reach each other), written out in full; when one is
/// untied or shrinks, the test fails until the list says so, so the list only ever gets shorter.
/// </summary>
public sealed class NamespaceCycleTests
{
    /// <summary>The projects under <c>src/</c>; each directory's name is its assembly's name.</summary>
    private static readonly string[] SrcAssemblies =
        ["Tunnel2.Protocol", "Tunnel2.Loops", "Tunnel2.Balancing", "Tunnel2.Hosting", "ProxyEntry", "TunnelServer", "TunnelClient", "TestBackend"];

    /// <summary>The cycles on main at 78cf7c9 that are not untied yet. Shrink this list; never add to it.</summary>
    private static readonly string[][] KnownCycles =
    [
        [
            "Tunnel2.ProxyEntry.Access", "Tunnel2.ProxyEntry.Balancing", "Tunnel2.ProxyEntry.Diagnostics", "Tunnel2.ProxyEntry.Draining",
            "Tunnel2.ProxyEntry.Forwarding", "Tunnel2.ProxyEntry.Forwarding.Retry", "Tunnel2.ProxyEntry.Limits", "Tunnel2.ProxyEntry.Pipeline",
            "Tunnel2.ProxyEntry.Problems", "Tunnel2.ProxyEntry.Routing", "Tunnel2.ProxyEntry.Sessions", "Tunnel2.ProxyEntry.Upgrades",
        ],
        [
            "Tunnel2.TunnelServer.Configuration", "Tunnel2.TunnelServer.Hosting", "Tunnel2.TunnelServer.Security", "Tunnel2.TunnelServer.Tcp",
            "Tunnel2.TunnelServer.Tls", "Tunnel2.TunnelServer.Uplinks", "Tunnel2.TunnelServer.Uplinks.Handshake",
        ],
        [
            "Tunnel2.TunnelClient.Backends", "Tunnel2.TunnelClient.Configuration", "Tunnel2.TunnelClient.Health",
            "Tunnel2.TunnelClient.Inspection", "Tunnel2.TunnelClient.Relay", "Tunnel2.TunnelClient.Relay.Admission",
            "Tunnel2.TunnelClient.Relay.Attempt", "Tunnel2.TunnelClient.Relay.Bodies", "Tunnel2.TunnelClient.Relay.Exchange",
            "Tunnel2.TunnelClient.Relay.Failures", "Tunnel2.TunnelClient.Relay.Leasing", "Tunnel2.TunnelClient.Relay.Picking",
            "Tunnel2.TunnelClient.Relay.Pipeline", "Tunnel2.TunnelClient.Relay.Retry", "Tunnel2.TunnelClient.Relay.Upgrades",
            "Tunnel2.TunnelClient.Tcp", "Tunnel2.TunnelClient.Tls", "Tunnel2.TunnelClient.Uplinks",
        ],
    ];

    [Fact]
    public void Src_has_no_namespace_cycle_beyond_the_known_ones()
    {
        Dictionary<(string From, string To), SortedSet<string>> causes = SrcAssemblies
            .SelectMany(name => NamespaceGraph.Causes(Assembly.Load(name), "Tunnel2."))
            .ToDictionary();
        List<SortedSet<string>> found = NamespaceGraph.Cycles(NamespaceGraph.Of(causes.Keys));
        List<SortedSet<string>> known = KnownCycles.Select(cycle => new SortedSet<string>(cycle, StringComparer.Ordinal)).ToList();

        List<string> problems = [];
        foreach (SortedSet<string> cycle in found.Where(cycle => !known.Any(cycle.SetEquals)))
        {
            if (known.FirstOrDefault(old => old.IsSupersetOf(cycle)) is { } shrunk)
            {
                problems.Add($"A known cycle shrank; in {nameof(KnownCycles)}, replace {Describe(shrunk)} with {Describe(cycle)}");
            }
            else if (known.FirstOrDefault(old => old.Overlaps(cycle)) is { } grown)
            {
                problems.Add($"A known cycle grew: {Describe(grown)} is now {Describe(cycle)}. Untie the new import instead.");
            }
            else
            {
                problems.Add($"A new namespace cycle: {Describe(cycle)}. Untie it (move the shared type down, or invert the call).");
            }

            foreach (((string from, string to), SortedSet<string> types) in causes.Where(edge => cycle.Contains(edge.Key.From) && cycle.Contains(edge.Key.To)))
            {
                problems.Add($"    {from} -> {to}: {string.Join(", ", types)}");
            }
        }

        foreach (SortedSet<string> gone in known.Where(old => !found.Any(cycle => cycle.Overlaps(old))))
        {
            problems.Add($"A known cycle is gone; remove it from {nameof(KnownCycles)}: {Describe(gone)}");
        }

        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
    }

    [Fact]
    public void The_assemblies_read_are_every_project_in_src()
    {
        string[] projects = Directory.GetDirectories(GeneratedHelp.InRepository("src"))
            .Where(directory => Directory.EnumerateFiles(directory, "*.csproj").Any())
            .Select(Path.GetFileName)
            .Order(StringComparer.Ordinal)
            .ToArray()!;

        Assert.Equal(projects, SrcAssemblies.Order(StringComparer.Ordinal));
    }

    [Fact]
    public void The_cycle_finder_reports_each_knot_once_and_leaves_out_a_chain()
    {
        Dictionary<string, SortedSet<string>> edges = new()
        {
            ["A"] = ["B"],
            ["B"] = ["C"],
            ["C"] = ["A", "D"],
            ["D"] = ["E"],
            ["E"] = ["D"],
            ["F"] = ["A"],
        };

        List<SortedSet<string>> cycles = NamespaceGraph.Cycles(edges);

        Assert.Equal(["A|B|C", "D|E"], cycles.Select(cycle => string.Join('|', cycle)).Order(StringComparer.Ordinal));
    }

    [Fact]
    public void The_graph_sees_an_import_made_only_inside_a_method_body()
    {
        // Tunnel2.UnitTests.Architecture.Probe.Below is named only in Above's method body: no field, no signature.
        Dictionary<string, SortedSet<string>> edges = NamespaceGraph.Of(typeof(NamespaceCycleTests).Assembly, "Tunnel2.UnitTests.Architecture");

        Assert.Contains("Tunnel2.UnitTests.Architecture.Probe.Below", edges["Tunnel2.UnitTests.Architecture.Probe.Above"]);
        Assert.False(edges.ContainsKey("Tunnel2.UnitTests.Architecture.Probe.Below"), "Below names nothing, so it has no edge.");
    }

    private static string Describe(IEnumerable<string> cycle) => "{ " + string.Join(", ", cycle.Select(name => $"\"{name}\"")) + " }";
}
