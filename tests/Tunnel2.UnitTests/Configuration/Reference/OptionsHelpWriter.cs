using System.Text;

namespace Tunnel2.UnitTests.Configuration.Reference;

/// <summary>The settings part of <c>--help</c>: every key by group, with its switch, its default and its doc comment.</summary>
public static class OptionsHelpWriter
{
    private const int Width = 110;

    public static string Write(IEnumerable<OptionGroup> groups)
    {
        var help = new StringBuilder();
        foreach (OptionGroup group in groups)
        {
            if (group.Options.Count == 0)
            {
                continue;
            }

            string title = group.Summary is null ? group.Name : $"{group.Name}: {XmlDocs.Render(group.Summary, markdown: false)}";
            Wrap(help, title, firstIndent: "", indent: "  ");
            foreach (OptionEntry option in group.Options)
            {
                string head = option.Switch is null ? option.Key : $"{option.Key}, {option.Switch}";
                help.Append("  ").Append(head).Append("  [default ").Append(option.Default).Append(']').Append('\n');
                string values = option.Values.Count == 0 ? "" : $" One of: {string.Join(", ", option.Values.Select(value => value.Name))}.";
                Wrap(help, XmlDocs.Render(option.Summary, markdown: false) + values, firstIndent: "      ", indent: "      ");
            }

            help.Append('\n');
        }

        return help.ToString().TrimEnd('\n');
    }

    private static void Wrap(StringBuilder help, string text, string firstIndent, string indent)
    {
        var line = new StringBuilder(firstIndent);
        bool empty = true;
        foreach (string word in text.Split(' '))
        {
            if (!empty && line.Length + 1 + word.Length > Width)
            {
                help.Append(line).Append('\n');
                line.Clear().Append(indent);
                empty = true;
            }

            if (!empty)
            {
                line.Append(' ');
            }

            line.Append(word);
            empty = false;
        }

        help.Append(line).Append('\n');
    }
}
