using System.Diagnostics;
using Tunnel2.TestBackend.Endpoints;

namespace Tunnel2.TestBackend.Tests;

/// <summary>Runs the real TestBackend executable (copied next to the tests) as a separate process.</summary>
public sealed class CommandLineTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData("--help")]
    [InlineData("-h")]
    public async Task Help_prints_usage_and_exits_zero(string flag)
    {
        var (exitCode, output, _) = await RunAsync(flag);

        Assert.Equal(0, exitCode);
        Assert.StartsWith("TestBackend", output, StringComparison.Ordinal);
        foreach (var endpoint in EndpointCatalog.All)
        {
            Assert.Contains(endpoint.Path, output, StringComparison.Ordinal);
        }

        Assert.Contains("--urls", output, StringComparison.Ordinal);
        Assert.Contains("ASPNETCORE_URLS", output, StringComparison.Ordinal);
        Assert.Contains("Kestrel:Limits:MaxConcurrentConnections", output, StringComparison.Ordinal);
        Assert.Contains("http://127.0.0.1:12007", output, StringComparison.Ordinal);

        // Help exits before the host is built: nothing is listening, so no lifetime log lines.
        Assert.DoesNotContain("Now listening", output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--no-such-flag", "1", "unknown option '--no-such-flag'")]
    [InlineData("--urls", "--TestBackend:RequestLoging=true", "option '--urls' needs a value")]
    [InlineData("--TestBackend:RequestLoging=true", "x", "unknown option '--TestBackend:RequestLoging'")]
    public async Task An_unknown_option_or_one_without_its_value_exits_2_naming_it(string first, string second, string expected)
    {
        var (exitCode, _, errors) = await RunAsync(first, second);

        Assert.Equal(2, exitCode);
        Assert.Contains(expected, errors, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Invalid_configuration_exits_2_with_a_clear_message()
    {
        var (exitCode, _, errors) = await RunAsync("--urls", "http://127.0.0.1:0", "--Kestrel:Limits:KeepAliveTimeout=soon");

        Assert.Equal(2, exitCode);
        Assert.Contains("Kestrel:Limits:KeepAliveTimeout", errors, StringComparison.Ordinal);
    }

    private static async Task<(int ExitCode, string Output, string Errors)> RunAsync(params string[] args)
    {
        var dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } hostPath ? hostPath : "dotnet";
        var start = new ProcessStartInfo(dotnet)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "TestBackend.dll"));
        foreach (var arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(Token);
        timeout.CancelAfter(TimeSpan.FromSeconds(20));
        using var process = Process.Start(start)!;
        var output = process.StandardOutput.ReadToEndAsync(timeout.Token);
        var errors = process.StandardError.ReadToEndAsync(timeout.Token);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw;
        }

        return (process.ExitCode, await output, await errors);
    }
}
