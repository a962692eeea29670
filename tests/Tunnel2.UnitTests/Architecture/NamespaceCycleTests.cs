using System.Reflection;
using Tunnel2.UnitTests.Configuration.Reference;

namespace Tunnel2.UnitTests.Architecture;

/// <summary>
/// No namespace of <c>src/</c> may reach itself through the namespaces it uses: each project's namespaces form layers
/// (options and values below, the steps above them, the composition root on top). The test fails on any cycle, naming
/// the namespaces of its knot and, for each edge inside it, the types that make it, so the import that closed it is
/// found at once.
/// </summary>
public sealed class NamespaceCycleTests
{
    /// <summary>The projects under <c>src/</c>; each directory's name is its assembly's name.</summary>
    private static readonly string[] SrcAssemblies =
        ["Tunnel2.Protocol", "Tunnel2.Loops", "Tunnel2.Balancing", "Tunnel2.Hosting", "ProxyEntry", "TunnelServer", "TunnelClient", "TestBackend"];

    [Fact]
    public void Src_has_no_namespace_cycle()
    {
        Dictionary<(string From, string To), SortedSet<string>> causes = SrcAssemblies
            .SelectMany(name => NamespaceGraph.Causes(Assembly.Load(name), "Tunnel2."))
            .ToDictionary();

        List<string> problems = Problems(causes);

        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
    }

    [Fact]
    public void A_single_import_that_closes_a_cycle_fails_the_check_and_is_named()
    {
        // Options below, a step above them: a layering until the options name the step.
        Dictionary<(string From, string To), SortedSet<string>> layered = new()
        {
            [("App.Steps", "App.Configuration")] = new(StringComparer.Ordinal) { "Step" },
            [("App.Root", "App.Steps")] = new(StringComparer.Ordinal) { "Composition" },
        };
        Assert.Empty(Problems(layered));

        Dictionary<(string From, string To), SortedSet<string>> knotted = new(layered)
        {
            [("App.Configuration", "App.Steps")] = new(StringComparer.Ordinal) { "Options" },
        };
        List<string> problems = Problems(knotted);

        Assert.Equal(3, problems.Count);
        Assert.Contains("\"App.Configuration\", \"App.Steps\"", problems[0], StringComparison.Ordinal);
        Assert.DoesNotContain("App.Root", problems[0], StringComparison.Ordinal);
        Assert.Contains("    App.Configuration -> App.Steps: Options", problems);
        Assert.Contains("    App.Steps -> App.Configuration: Step", problems);
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

    /// <summary>Each cycle in the graph of <paramref name="causes"/>, then each of its edges with the types that make it.</summary>
    private static List<string> Problems(Dictionary<(string From, string To), SortedSet<string>> causes)
    {
        List<string> problems = [];
        foreach (SortedSet<string> cycle in NamespaceGraph.Cycles(NamespaceGraph.Of(causes.Keys)))
        {
            problems.Add($"A namespace cycle: {Describe(cycle)}. Untie it (move the shared type down, or invert the call).");
            foreach (((string from, string to), SortedSet<string> types) in causes
                         .Where(edge => cycle.Contains(edge.Key.From) && cycle.Contains(edge.Key.To))
                         .OrderBy(edge => edge.Key.From, StringComparer.Ordinal)
                         .ThenBy(edge => edge.Key.To, StringComparer.Ordinal))
            {
                problems.Add($"    {from} -> {to}: {string.Join(", ", types)}");
            }
        }

        return problems;
    }

    private static string Describe(IEnumerable<string> cycle) => "{ " + string.Join(", ", cycle.Select(name => $"\"{name}\"")) + " }";
}
