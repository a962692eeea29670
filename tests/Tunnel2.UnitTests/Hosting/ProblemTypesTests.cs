using System.Reflection;
using Tunnel2.Hosting;
using Tunnel2.UnitTests.Configuration.Reference;

namespace Tunnel2.UnitTests.Hosting;

public sealed class ProblemTypesTests
{
    [Fact]
    public void Each_problem_type_is_a_distinct_tunnel2_urn()
    {
        string[] types = typeof(ProblemTypes).GetFields(BindingFlags.Public | BindingFlags.Static)
            .Where(field => field.IsLiteral && field.Name != nameof(ProblemTypes.Prefix))
            .Select(field => (string)field.GetRawConstantValue()!)
            .ToArray();

        Assert.All(types, type => Assert.StartsWith(ProblemTypes.Prefix, type, StringComparison.Ordinal));
        Assert.Equal(types.Length, types.Distinct(StringComparer.Ordinal).Count());
        Assert.Equal("urn:tunnel2:problem:bad-token", ProblemTypes.ForReason("bad-token"));
    }

    [Fact]
    public void No_source_file_but_the_table_spells_out_a_problem_type()
    {
        string src = GeneratedHelp.InRepository("src");
        string[] spelled = Directory.EnumerateFiles(src, "*.cs", SearchOption.AllDirectories)
            .Where(path => !path.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal))
            .Where(path => Path.GetFileName(path) != "ProblemTypes.cs")
            .Where(path => File.ReadAllText(path).Contains(ProblemTypes.Prefix, StringComparison.Ordinal))
            .Select(path => Path.GetRelativePath(src, path))
            .ToArray();

        Assert.Empty(spelled);
    }
}
