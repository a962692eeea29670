using System.Net;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.TestBackend.Tests;

public sealed class ConfigurationTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Kestrel_limits_default_to_the_tuned_values()
    {
        await using var app = TestBackendApp.Create(["--urls", "http://127.0.0.1:0"]);

        var kestrel = app.Services.GetRequiredService<IOptions<KestrelServerOptions>>().Value;
        Assert.Equal(10_000, kestrel.Limits.MaxConcurrentConnections);
        Assert.Equal(10_000, kestrel.Limits.MaxConcurrentUpgradedConnections);
        Assert.Equal(TimeSpan.FromMinutes(2), kestrel.Limits.KeepAliveTimeout);
        Assert.Equal(1024 * 1024, kestrel.Limits.MaxRequestBufferSize);
        Assert.False(kestrel.AllowSynchronousIO);
        Assert.False(kestrel.AddServerHeader);
    }

    [Fact]
    public async Task Kestrel_limits_can_be_overridden_on_the_command_line()
    {
        await using var app = TestBackendApp.Create(
        [
            "--urls", "http://127.0.0.1:0",
            "--Kestrel:Limits:MaxConcurrentConnections=123",
            "--Kestrel:Limits:MaxConcurrentUpgradedConnections=45",
            "--Kestrel:Limits:KeepAliveTimeout=00:00:30",
            "--Kestrel:Limits:MaxRequestBufferSize=65536",
        ]);

        var limits = app.Services.GetRequiredService<IOptions<KestrelServerOptions>>().Value.Limits;
        Assert.Equal(123, limits.MaxConcurrentConnections);
        Assert.Equal(45, limits.MaxConcurrentUpgradedConnections);
        Assert.Equal(TimeSpan.FromSeconds(30), limits.KeepAliveTimeout);
        Assert.Equal(65_536, limits.MaxRequestBufferSize);
    }

    [Theory]
    [InlineData("--Kestrel:Limits:MaxConcurrentConnections=0", "MaxConcurrentConnections")]
    [InlineData("--Kestrel:Limits:MaxConcurrentConnections=many", "MaxConcurrentConnections")]
    [InlineData("--Kestrel:Limits:MaxConcurrentUpgradedConnections=-5", "MaxConcurrentUpgradedConnections")]
    [InlineData("--Kestrel:Limits:KeepAliveTimeout=soon", "KeepAliveTimeout")]
    [InlineData("--Kestrel:Limits:KeepAliveTimeout=00:00:00", "KeepAliveTimeout")]
    [InlineData("--Kestrel:Limits:MaxRequestBufferSize=0", "MaxRequestBufferSize")]
    [InlineData("--TestBackend:RequestLogging=maybe", "TestBackend:RequestLogging")]
    [InlineData("--TestBackend:ListenBacklog=0", "TestBackend:ListenBacklog")]
    [InlineData("--TestBackend:ListenBacklog=lots", "TestBackend:ListenBacklog")]
    [InlineData("--Serilog:Formatter=xml", "Serilog:Formatter")]
    public void Invalid_settings_are_refused_with_a_message_naming_the_key(string setting, string key)
    {
        var error = Assert.Throws<InvalidConfigurationException>(() => TestBackendApp.Create(["--urls", "http://127.0.0.1:0", setting]));

        Assert.Contains(key, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_listen_backlog_is_Kestrels_512_unless_set()
    {
        await using var plain = TestBackendApp.Create(["--urls", "http://127.0.0.1:0"]);
        await using var raised = TestBackendApp.Create(["--urls", "http://127.0.0.1:0", "--TestBackend:ListenBacklog=4096"]);

        Assert.Equal(512, plain.Services.GetRequiredService<IOptions<SocketTransportOptions>>().Value.Backlog);
        Assert.Equal(4096, raised.Services.GetRequiredService<IOptions<SocketTransportOptions>>().Value.Backlog);
    }

    [Fact]
    public async Task Without_an_address_the_default_is_127_0_0_1_port_12007()
    {
        // An address set in the environment of the test run wins, by design; expect it then.
        var fromEnvironment = new[] { "ASPNETCORE_URLS", "DOTNET_URLS", "URLS" }
            .Select(Environment.GetEnvironmentVariable)
            .FirstOrDefault(value => !string.IsNullOrWhiteSpace(value));

        await using var app = TestBackendApp.Create([]);

        Assert.Equal(fromEnvironment ?? "http://127.0.0.1:12007", app.Configuration[WebHostDefaults.ServerUrlsKey]);
    }

    [Fact]
    public async Task An_address_on_the_command_line_replaces_the_default()
    {
        await using var app = TestBackendApp.Create(["--urls", "http://127.0.0.1:5999"]);

        Assert.Equal("http://127.0.0.1:5999", app.Configuration[WebHostDefaults.ServerUrlsKey]);
    }

    [Theory]
    [InlineData(null, null, false)]
    [InlineData("urls", "http://0.0.0.0:8080", true)]
    [InlineData("Kestrel:Endpoints:Http:Url", "http://127.0.0.1:9000", true)]
    [InlineData("http_ports", "8080", false)]
    public void Only_an_explicit_address_counts_as_configured(string? key, string? value, bool expected)
    {
        var settings = new Dictionary<string, string?>();
        if (key is not null)
        {
            settings[key] = value;
        }

        var configuration = new ConfigurationBuilder().AddInMemoryCollection(settings).Build();

        Assert.Equal(expected, Tunnel2.TestBackend.Configuration.TestBackendSettings.NamesListenAddress(configuration));
    }

    [Fact]
    public async Task Several_backends_run_in_one_process_without_touching_the_static_logger()
    {
        var staticLogger = Serilog.Log.Logger;

        await using (var first = await RunningBackend.StartAsync(Token, "--TestBackend:RequestLogging=true", "--Serilog:Formatter=compact"))
        {
            await using (var second = await RunningBackend.StartAsync(Token))
            {
                Assert.NotEqual(first.BaseAddress, second.BaseAddress);
                Assert.Equal("pong", await first.Client.GetStringAsync("loadtest/ping", Token));
                Assert.Equal("pong", await second.Client.GetStringAsync("loadtest/ping", Token));
            }

            // Stopping one backend (and disposing its logger) leaves the other serving and logging.
            using var response = await first.Client.GetAsync("loadtest/get", Token);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        Assert.Same(staticLogger, Serilog.Log.Logger);
    }
}
