using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;

namespace Tunnel2.UnitTests.Hosting;

/// <summary>How every executable starts and ends: help, configuration failures, crashes, the host's exit code.</summary>
public sealed class ProgramHostTests
{
    [Theory]
    [InlineData("--help")]
    [InlineData("-h")]
    [InlineData("-?")]
    public async Task Help_prints_the_usage_and_never_builds_the_host(string flag)
    {
        var output = new StringWriter();

        int exitCode = await ProgramHost.RunAsync("Tool", ["--x", flag], "Usage: Tool\n\n", _ => throw new InvalidOperationException("built"), output, new StringWriter());

        Assert.Equal(0, exitCode);
        Assert.Equal("Usage: Tool" + Environment.NewLine, output.ToString());
    }

    [Theory]
    [InlineData("--help", "common")]
    [InlineData("--help-all", "all")]
    public async Task Help_shows_the_common_options_and_help_all_everything(string flag, string expected)
    {
        var output = new StringWriter();

        int exitCode = await ProgramHost.RunAsync("Tool", [flag], new ProgramHelp("common", "all"), _ => throw new InvalidOperationException("built"), output, new StringWriter());

        Assert.Equal(0, exitCode);
        Assert.Equal(expected + Environment.NewLine, output.ToString());
    }

    [Fact]
    public async Task Version_prints_the_name_and_version_and_never_builds_the_host()
    {
        var output = new StringWriter();

        int exitCode = await ProgramHost.RunAsync("Tool", ["--version"], "usage", _ => throw new InvalidOperationException("built"), output, new StringWriter());

        Assert.Equal(0, exitCode);
        Assert.Matches(@"^Tool \S+\r?\n$", output.ToString());
        Assert.DoesNotContain("+", output.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_port_in_use_at_start_exits_2_with_one_line_naming_the_option()
    {
        var errors = new StringWriter();

        int exitCode = await ProgramHost.RunAsync("Tool", [], "usage", args =>
        {
            HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { Args = args, DisableDefaults = true });
            builder.Services.AddSingleton(new ListenerOptions([KeyValuePair.Create("--public-url", "http://127.0.0.1:12000")]));
            builder.Services.AddHostedService<PortTaken>();
            return builder.Build();
        }, new StringWriter(), errors);

        Assert.Equal(ProgramHost.InvalidConfigurationExitCode, exitCode);
        Assert.Equal("error: --public-url http://127.0.0.1:12000: address already in use; choose another port or stop the process using it" + Environment.NewLine,
            errors.ToString());
    }

    [Fact]
    public async Task Validation_failures_exit_2_each_on_its_own_line()
    {
        var errors = new StringWriter();
        var failure = new OptionsValidationException("Tool", typeof(object), ["A must be positive.", "B is required."]);

        int exitCode = await ProgramHost.RunAsync("Tool", [], "usage", _ => throw failure, new StringWriter(), errors);

        Assert.Equal(ProgramHost.InvalidConfigurationExitCode, exitCode);
        Assert.Equal(
            string.Join(Environment.NewLine, "Tool: invalid configuration:", "  - A must be positive.", "  - B is required.", "Run with --help for the options.", string.Empty),
            errors.ToString());
    }

    [Theory]
    [InlineData("invalid")]
    [InlineData("binder")]
    public async Task An_unreadable_setting_exits_2_with_the_reason(string kind)
    {
        var errors = new StringWriter();
        Exception failure = kind == "invalid"
            ? new InvalidConfigurationException("Kestrel:Limits:KeepAliveTimeout 'soon' is not a time span.")
            : new InvalidOperationException("Failed to convert configuration value 'soon' at 'Tool:Timeout' to type 'System.TimeSpan'.");

        int exitCode = await ProgramHost.RunAsync("Tool", [], "usage", _ => throw failure, new StringWriter(), errors);

        Assert.Equal(2, exitCode);
        Assert.Contains("  - " + failure.Message, errors.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Any_other_failure_exits_1_with_the_exception()
    {
        var errors = new StringWriter();

        int exitCode = await ProgramHost.RunAsync("Tool", [], "usage", _ => throw new InvalidOperationException("disk on fire"), new StringWriter(), errors);

        Assert.Equal(ProgramHost.CrashExitCode, exitCode);
        Assert.StartsWith("Tool terminated unexpectedly: System.InvalidOperationException: disk on fire", errors.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_host_that_stops_by_itself_exits_with_its_exit_code_source()
    {
        int exitCode = await ProgramHost.RunAsync("Tool", [], "usage", args =>
        {
            HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { Args = args, DisableDefaults = true });
            builder.Services.AddSingleton<IExitCodeSource>(new FixedExitCode(3));
            builder.Services.AddHostedService<StopAtOnce>();
            return builder.Build();
        }, new StringWriter(), new StringWriter());

        Assert.Equal(3, exitCode);
    }

    private sealed record FixedExitCode(int ExitCode) : IExitCodeSource;

    private sealed class PortTaken : IHostedService
    {
        public Task StartAsync(CancellationToken cancellationToken) => throw new IOException(ListenerOptions.BindFailure("http://127.0.0.1:12000"),
            new System.Net.Sockets.SocketException((int)System.Net.Sockets.SocketError.AddressAlreadyInUse));

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }

    private sealed class StopAtOnce(IHostApplicationLifetime lifetime) : BackgroundService
    {
        protected override Task ExecuteAsync(CancellationToken stoppingToken)
        {
            lifetime.StopApplication();
            return Task.CompletedTask;
        }
    }
}
