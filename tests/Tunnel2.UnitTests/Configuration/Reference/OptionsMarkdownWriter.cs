using System.Text;

namespace Tunnel2.UnitTests.Configuration.Reference;

/// <summary>The option tables of docs/configuration.md: a heading, the group's doc comment and a table per group.</summary>
public static class OptionsMarkdownWriter
{
    public static string Write(IEnumerable<OptionGroup> groups)
    {
        var markdown = new StringBuilder();
        foreach (OptionGroup group in groups)
        {
            if (group.Options.Count == 0)
            {
                continue;
            }

            markdown.Append("### `").Append(group.Name).Append("`\n\n");
            if (group.Summary is not null)
            {
                markdown.Append(XmlDocs.Render(group.Summary, markdown: true)).Append("\n\n");
            }

            markdown.Append("| key | switch | default | meaning |\n|---|---|---|---|\n");
            foreach (OptionEntry option in group.Options)
            {
                markdown.Append("| `").Append(option.Key).Append("` | ")
                    .Append(option.Switch is null ? "" : $"`{option.Switch}`").Append(" | `")
                    .Append(option.Default.Replace("|", "\\|", StringComparison.Ordinal)).Append("` | ")
                    .Append(XmlDocs.Render(option.Summary, markdown: true)).Append(ValuesOf(option)).Append(" |\n");
            }

            markdown.Append('\n');
        }

        return markdown.ToString().TrimEnd('\n') + "\n";
    }

    /// <summary>An enum-typed key's values, each with what its own doc comment says.</summary>
    private static string ValuesOf(OptionEntry option)
    {
        if (option.Values.Count == 0)
        {
            return "";
        }

        var text = new StringBuilder(" One of:");
        for (int i = 0; i < option.Values.Count; i++)
        {
            EnumValue value = option.Values[i];
            text.Append(i == 0 ? " `" : "; `").Append(value.Name).Append('`');
            if (value.Summary is not null)
            {
                string said = XmlDocs.Render(value.Summary, markdown: true).TrimEnd('.');
                text.Append(" (").Append(said.Length > 1 && char.IsLower(said[1]) ? char.ToLowerInvariant(said[0]) + said[1..] : said).Append(')');
            }
        }

        return text.Append('.').ToString();
    }
}
