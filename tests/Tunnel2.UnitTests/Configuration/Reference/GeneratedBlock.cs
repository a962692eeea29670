namespace Tunnel2.UnitTests.Configuration.Reference;

/// <summary>The generated part of a markdown document, between two comment lines that name it.</summary>
public static class GeneratedBlock
{
    public static string Begin(string name) =>
        $"<!-- BEGIN GENERATED: {name} options, from the doc comments and defaults in the code (OptionsReferenceTests); do not edit by hand -->\n";

    public static string End(string name) => $"<!-- END GENERATED: {name} options -->";

    public static string Read(string document, string name)
    {
        (int start, int end) = Find(document, name);
        return document[start..end];
    }

    public static string Replace(string document, string name, string content)
    {
        (int start, int end) = Find(document, name);
        return document[..start] + content + document[end..];
    }

    private static (int Start, int End) Find(string document, string name)
    {
        int begin = document.IndexOf(Begin(name), StringComparison.Ordinal);
        int end = document.IndexOf(End(name), StringComparison.Ordinal);
        if (begin < 0 || end < begin)
        {
            throw new InvalidOperationException($"The document has no generated block for {name}: add the lines {Begin(name).TrimEnd()} and {End(name)}.");
        }

        return (begin + Begin(name).Length, end);
    }
}
