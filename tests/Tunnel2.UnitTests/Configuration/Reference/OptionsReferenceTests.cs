using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelServer.Configuration;
using ClientCommandLine = Tunnel2.TunnelClient.Configuration.CommandLine;
using ServerCommandLine = Tunnel2.TunnelServer.Configuration.CommandLine;

namespace Tunnel2.UnitTests.Configuration.Reference;

/// <summary>
/// Each option is documented once, by its doc comment in the code, with its default in the code. The settings part of
/// <c>--help</c> (a generated constant, <c>CommandLine.Settings</c>, so the published binary needs no doc files) and the
/// tables of docs/configuration.md are made from them; these tests fail when either differs from what the code says now.
/// </summary>
public sealed class OptionsReferenceTests
{
    public const string RegenerateVariable = "TUNNEL2_REGENERATE";

    private const string Regenerate =
        "Regenerate with: TUNNEL2_REGENERATE=1 dotnet test tests/Tunnel2.UnitTests -c Release --filter OptionsReferenceTests (then build again).";

    private static readonly XmlDocs Docs = new(typeof(TunnelServerOptions).Assembly, typeof(ProxyEntryOptions).Assembly, typeof(TunnelClientOptions).Assembly,
        typeof(Tunnel2.Balancing.BalancingStrategy).Assembly);

    public static IReadOnlyList<OptionGroup> ServerGroups() =>
    [
        .. OptionsCatalog.Groups(typeof(TunnelServerOptions), TunnelServerOptions.SectionName, ServerCommandLine.SwitchMappings, Docs),
        .. OptionsCatalog.Groups(typeof(ProxyEntryOptions), ProxyEntryOptions.SectionName, ServerCommandLine.SwitchMappings, Docs),
    ];

    public static IReadOnlyList<OptionGroup> ClientGroups() =>
        OptionsCatalog.Groups(typeof(TunnelClientOptions), TunnelClientOptions.SectionName, ClientCommandLine.SwitchMappings, Docs);

    [Theory]
    [InlineData("TunnelServer")]
    [InlineData("TunnelClient")]
    public void The_help_and_the_known_keys_are_what_the_code_documents(string executable)
    {
        IReadOnlyList<OptionGroup> groups = executable == "TunnelServer" ? ServerGroups() : ClientGroups();
        string path = $"src/{executable}/Configuration/CommandLine.Settings.cs";
        string expected = GeneratedHelp.Render($"Tunnel2.{executable}.Configuration", OptionsHelpWriter.Write(groups),
            groups.SelectMany(group => group.Options).Select(option => option.Key));
        AssertCurrent(File.ReadAllText(GeneratedHelp.InRepository(path)), expected, path,
            () => File.WriteAllText(GeneratedHelp.InRepository(path), expected));
    }

    [Fact]
    public void The_compiled_help_is_the_generated_file()
    {
        // The file is compiled in; a stale build would print stale help (after regenerating, build again).
        if (Environment.GetEnvironmentVariable(RegenerateVariable) == "1")
        {
            return;
        }

        Assert.True(OptionsHelpWriter.Write(ServerGroups()) == ServerCommandLine.Settings, "TunnelServer's compiled --help is stale: build again.");
        Assert.True(OptionsHelpWriter.Write(ClientGroups()) == ClientCommandLine.Settings, "TunnelClient's compiled --help is stale: build again.");
    }

    [Theory]
    [InlineData("TunnelServer")]
    [InlineData("TunnelClient")]
    public void Configuration_md_lists_every_option_as_the_code_documents_it(string executable)
    {
        string expected = OptionsMarkdownWriter.Write(executable == "TunnelServer" ? ServerGroups() : ClientGroups());
        string document = File.ReadAllText(GeneratedHelp.InRepository("docs/configuration.md"));
        string actual = GeneratedBlock.Read(document, executable);
        AssertCurrent(actual, expected, $"docs/configuration.md ({executable})",
            () => File.WriteAllText(GeneratedHelp.InRepository("docs/configuration.md"), GeneratedBlock.Replace(document, executable, expected)));
    }

    [Fact]
    public void Every_switch_sets_a_documented_key()
    {
        foreach ((IReadOnlyDictionary<string, string> switches, IReadOnlyList<OptionGroup> groups) in
                 new[] { (ServerCommandLine.SwitchMappings, ServerGroups()), (ClientCommandLine.SwitchMappings, ClientGroups()) })
        {
            HashSet<string> switched = [.. groups.SelectMany(group => group.Options).Select(option => option.Switch).OfType<string>()];
            Assert.All(switches.Keys, name => Assert.Contains(name, switched));
        }
    }

    [Fact]
    public void Every_old_key_names_a_documented_new_key()
    {
        foreach ((Tunnel2.Hosting.Configuration.RenamedKeys renamed, IReadOnlyList<OptionGroup> groups) in
                 new[] { (TunnelServer.Configuration.LegacyKeys.Renamed, ServerGroups()), (TunnelClient.Configuration.LegacyKeys.Renamed, ClientGroups()) })
        {
            // A new key is a documented option, or the section or dictionary above documented ones (an old key's subtree moves whole).
            List<string> keys = [.. groups.SelectMany(group => group.Options)
                .Select(option => option.Key.Replace(":<host>", "", StringComparison.Ordinal).Replace(":<id>:…", "", StringComparison.Ordinal))];
            Assert.All(renamed.OldKeys, old => Assert.Contains(keys, key => key.Equals(renamed.NewKeyOf(old), StringComparison.OrdinalIgnoreCase)
                || key.StartsWith(renamed.NewKeyOf(old) + ":", StringComparison.OrdinalIgnoreCase)));
        }
    }

    [Fact]
    public void The_configuration_document_lists_every_old_key_at_its_end()
    {
        string document = File.ReadAllText(GeneratedHelp.InRepository("docs/configuration.md"));
        int oldKeys = document.IndexOf("\n## Keys of the previous release", StringComparison.Ordinal);

        Assert.True(oldKeys > document.LastIndexOf("<!-- END GENERATED", StringComparison.Ordinal), "the old keys come after every option table");
        Assert.DoesNotContain("\n## ", document[(oldKeys + 1)..], StringComparison.Ordinal);
        foreach (Tunnel2.Hosting.Configuration.RenamedKeys renamed in new[] { TunnelServer.Configuration.LegacyKeys.Renamed, TunnelClient.Configuration.LegacyKeys.Renamed })
        {
            Assert.All(renamed.OldKeys, old => Assert.Contains($"| `{old}` | `{renamed.NewKeyOf(old)}` |", document[oldKeys..], StringComparison.Ordinal));
        }
    }

    private static void AssertCurrent(string actual, string expected, string where, Action write)
    {
        if (actual == expected)
        {
            return;
        }

        if (Environment.GetEnvironmentVariable(RegenerateVariable) == "1")
        {
            write();
            return;
        }

        string[] have = actual.Split('\n');
        string[] want = expected.Split('\n');
        int line = 0;
        while (line < have.Length && line < want.Length && have[line] == want[line])
        {
            line++;
        }

        Assert.Fail($"{where} is not what the options' doc comments and defaults say (first difference at line {line + 1}):\n"
                    + $"  has:  {(line < have.Length ? have[line] : "(end)")}\n  code: {(line < want.Length ? want[line] : "(end)")}\n{Regenerate}");
    }
}
