using System.Text.RegularExpressions;
using Tunnel2.Hosting;
using Tunnel2.TunnelClient.Configuration;
using ServerCommandLine = Tunnel2.TunnelServer.Configuration.CommandLine;

namespace Tunnel2.UnitTests.Hosting;

/// <summary>What an executable's command line may hold, and how what it does not know is named.</summary>
public sealed partial class CommandLineSpecTests
{
    private sealed class ToolOptions
    {
        public string? Token { get; set; }

        public Dictionary<string, string> Hosts { get; set; } = [];
    }

    private static readonly CommandLineSpec Tool = new CommandLineSpec(new Dictionary<string, string>
    {
        ["--token"] = "Tool:Token",
        ["--max-queue"] = "Tool:MaxQueue",
    }).WithSection<ToolOptions>("Tool").WithKey("urls");

    [Theory]
    [InlineData("--token", "secret")]
    [InlineData("--token=secret")]
    [InlineData("--TOKEN", "secret")] // switches match regardless of case, as the configuration source matches them
    [InlineData("--Tool:Token=secret")]
    [InlineData("--tool:token", "secret")]
    [InlineData("Tool:Token=secret")]
    [InlineData("--Tool:Hosts:app=demo")] // below the first key is the section's own business
    [InlineData("--Serilog:MinimumLevel:Default=Warning")]
    [InlineData("--Kestrel:Limits:KeepAliveTimeout=00:01:00")]
    [InlineData("--environment", "Development")]
    [InlineData("--urls", "http://127.0.0.1:0")]
    [InlineData("--max-queue", "-1")] // a value may start with one dash
    public void What_the_tool_knows_passes(params string[] args)
    {
        Assert.Empty(Tool.Problems(args));
    }

    [Theory]
    [InlineData("unknown option '--tokne'; did you mean '--token'?", "--tokne", "secret")]
    [InlineData("unknown option '--no-such-flag'", "--no-such-flag", "1")]
    [InlineData("unknown option '--Tool:Tokn'", "--Tool:Tokn=secret")]
    [InlineData("unknown option '--Other:Token'", "--Other:Token=secret")]
    [InlineData("unknown option 'Tool:Tokn'", "Tool:Tokn=secret")]
    [InlineData("unknown option '-t'", "-t", "secret")]
    [InlineData("unexpected argument 'stray': options start with --", "--token", "secret", "stray")]
    [InlineData("option '--token' needs a value ('--token <value>' or '--token=<value>')", "--token")]
    [InlineData("option '--token' needs a value", "--token", "--max-queue", "5")]
    public void What_the_tool_does_not_know_is_named(string expected, params string[] args)
    {
        Assert.Contains(Tool.Problems(args), problem => problem.StartsWith(expected, StringComparison.Ordinal));
    }

    [Fact]
    public void Every_problem_is_listed_not_only_the_first()
    {
        Assert.Equal(3, Tool.Problems(["--tokne", "a", "--Tool:Nope=1", "--token"]).Count);
    }

    public static TheoryData<string, string> DocumentedSwitches()
    {
        // A switch the help names twice (in another switch's text) is one case, not a duplicate xUnit would skip.
        var data = new TheoryData<string, string>();
        var seen = new HashSet<(string, string)>();
        foreach ((string which, string help) in new[]
                 {
                     ("client", CommandLine.HelpText), ("client", CommandLine.ShortHelpText),
                     ("server", ServerCommandLine.HelpText), ("server", ServerCommandLine.ShortHelpText),
                 })
        {
            foreach (Match match in SwitchInHelp().Matches(help))
            {
                if (seen.Add((which, match.Value)))
                {
                    data.Add(which, match.Value);
                }
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(DocumentedSwitches))]
    public void Every_switch_the_help_text_names_is_accepted(string which, string option)
    {
        if (option is "--help" or "--help-all" or "--version")
        {
            return; // handled before the command line is checked
        }

        CommandLineSpec spec = which == "client" ? CommandLine.Spec : ServerCommandLine.Spec;
        Assert.Empty(spec.Problems([option, "value"]));
    }

    // A switch the help lists: after the two-space indent of an option's line ("  TunnelServer:Token, --token  [default …]"
    // or "  --environment <name>"); prose, indented further, may mention the other executable's switches.
    [GeneratedRegex(@"(?<=^ {2}(\S+, )?)--[a-z0-9-]+", RegexOptions.Multiline)]
    private static partial Regex SwitchInHelp();
}
