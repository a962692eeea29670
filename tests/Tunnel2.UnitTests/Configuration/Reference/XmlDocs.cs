using System.Reflection;
using System.Text;
using System.Xml.Linq;

namespace Tunnel2.UnitTests.Configuration.Reference;

/// <summary>The XML documentation files the build writes beside each assembly (GenerateDocumentationFile), read for summaries.</summary>
public sealed class XmlDocs
{
    private readonly Dictionary<string, XElement> _members = new(StringComparer.Ordinal);

    public XmlDocs(params Assembly[] assemblies)
    {
        foreach (Assembly assembly in assemblies)
        {
            string path = Path.ChangeExtension(assembly.Location, ".xml");
            foreach (XElement member in XDocument.Load(path).Descendants("member"))
            {
                _members[(string)member.Attribute("name")!] = member;
            }
        }
    }

    public XElement? Summary(PropertyInfo property) =>
        _members.GetValueOrDefault($"P:{property.DeclaringType!.FullName}.{property.Name}")?.Element("summary");

    public XElement? Summary(FieldInfo field) => _members.GetValueOrDefault($"F:{field.DeclaringType!.FullName}.{field.Name}")?.Element("summary");

    public XElement? Summary(Type type) => _members.GetValueOrDefault($"T:{type.FullName}")?.Element("summary");

    /// <summary>The summary as one line of text; code in backticks when <paramref name="markdown"/>.</summary>
    public static string Render(XElement summary, bool markdown)
    {
        var text = new StringBuilder();
        Append(summary, text, markdown);
        return string.Join(' ', text.ToString().Split((char[])[' ', '\n', '\r', '\t'], StringSplitOptions.RemoveEmptyEntries));
    }

    private static void Append(XElement element, StringBuilder text, bool markdown)
    {
        foreach (XNode node in element.Nodes())
        {
            switch (node)
            {
                case XText plain:
                    text.Append(markdown ? EscapeMarkdown(plain.Value) : plain.Value);
                    break;
                case XElement { Name.LocalName: "c" } code:
                    text.Append(markdown ? $"`{code.Value.Replace("|", "\\|", StringComparison.Ordinal)}`" : code.Value);
                    break;
                case XElement { Name.LocalName: "see" or "seealso" } see:
                    string name = (string?)see.Attribute("cref") ?? (string?)see.Attribute("langword") ?? see.Value;
                    name = name[(name.LastIndexOf('.') + 1)..];
                    text.Append(markdown ? $"`{name}`" : name);
                    break;
                case XElement other:
                    Append(other, text, markdown);
                    break;
            }
        }
    }

    private static string EscapeMarkdown(string text) =>
        text.Replace("|", "\\|", StringComparison.Ordinal).Replace("<", "&lt;", StringComparison.Ordinal).Replace(">", "&gt;", StringComparison.Ordinal);
}
