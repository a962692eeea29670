using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests;

/// <summary>The real executables' command line: usage on --help, exit code 2 and every failure named on a bad setting.</summary>
public sealed class CommandLineTests
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData("server", "--help")]
    [InlineData("client", "-h")]
    public async Task Help_prints_the_usage_and_exits_0_without_starting(string which, string flag)
    {
        await using TunnelProcess process = Start(which, flag);

        Assert.Equal(0, await process.WaitForExitAsync(ExitTimeout));
        Assert.Contains(which == "server" ? "Usage: TunnelServer" : "Usage: TunnelClient", process.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("listening", process.Output, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task A_server_setting_that_does_not_parse_exits_2_and_names_it()
    {
        await using TunnelProcess process = Start("server", "--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0",
            "--TunnelServer:KeepAliveTimeout=soon");

        Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
        Assert.Contains("TunnelServer: invalid configuration:", process.Output, StringComparison.Ordinal);
        Assert.Contains("KeepAliveTimeout", process.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_client_setting_out_of_range_exits_2_and_lists_every_failure()
    {
        await using TunnelProcess process = Start("client", "--max-concurrency", "0");

        Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
        Assert.Contains("TunnelClient: invalid configuration:", process.Output, StringComparison.Ordinal);
        Assert.Contains("MaxConcurrency", process.Output, StringComparison.Ordinal);
        Assert.Contains("Session", process.Output, StringComparison.Ordinal); // no --session either: both are listed
    }

    private static TunnelProcess Start(string which, params string[] args) =>
        which == "server" ? TunnelProcess.StartServer(which, args) : TunnelProcess.StartClient(which, args);
}
