using System.ComponentModel.DataAnnotations;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.TunnelClient;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelServer;
using Tunnel2.TunnelServer.Configuration;

namespace Tunnel2.UnitTests.Configuration;

/// <summary>The drain deadlines and the request-header limit: defaults, ranges, switches, and the hosts' stop budget.</summary>
public sealed class DrainOptionsTests
{
    private static List<ValidationResult> Validate(object options)
    {
        var results = new List<ValidationResult>();
        Validator.TryValidateObject(options, new ValidationContext(options), results, validateAllProperties: true);
        return results;
    }

    [Fact]
    public void Drain_timeouts_default_to_30_seconds_and_the_header_limit_to_32_KiB()
    {
        Assert.Equal(TimeSpan.FromSeconds(30), new TunnelClientOptions().DrainTimeout);
        Assert.Equal(TimeSpan.FromSeconds(30), new TunnelServerOptions().DrainTimeout);
        Assert.Equal(32 * 1024, new ProxyEntryOptions().Limits.MaxRequestHeadersBytes);
    }

    [Theory]
    [InlineData("00:00:00", true)]
    [InlineData("00:00:30", true)]
    [InlineData("01:00:00", true)]
    [InlineData("01:00:01", false)]
    [InlineData("-00:00:01", false)]
    public void Drain_timeouts_are_range_checked(string value, bool valid)
    {
        TimeSpan timeout = TimeSpan.Parse(value, System.Globalization.CultureInfo.InvariantCulture);
        List<ValidationResult> client = Validate(new TunnelClientOptions { Session = "s", Token = "t", DrainTimeout = timeout });
        List<ValidationResult> server = Validate(new TunnelServerOptions { Token = "12345678", DrainTimeout = timeout });

        Assert.Equal(valid, client.Count == 0);
        Assert.Equal(valid, server.Count == 0);
        if (!valid)
        {
            Assert.Contains("TunnelClient:DrainTimeout", Assert.Single(client).ErrorMessage, StringComparison.Ordinal);
            Assert.Contains("TunnelServer:DrainTimeout", Assert.Single(server).ErrorMessage, StringComparison.Ordinal);
        }
    }

    [Theory]
    [InlineData(1023, false)]
    [InlineData(1024, true)]
    [InlineData(1024 * 1024, true)]
    [InlineData(1024 * 1024 + 1, false)]
    public void The_request_header_limit_is_range_checked(int bytes, bool valid)
    {
        Assert.Equal(valid, Validate(new Tunnel2.ProxyEntry.Limits.RequestLimitsOptions { MaxRequestHeadersBytes = bytes }).Count == 0);
    }

    [Fact]
    public void The_switches_map_to_the_options()
    {
        Assert.Equal("TunnelClient:DrainTimeout", TunnelClient.Configuration.CommandLine.SwitchMappings["--drain-timeout"]);
        Assert.Equal("TunnelServer:DrainTimeout", TunnelServer.Configuration.CommandLine.SwitchMappings["--drain-timeout"]);
        Assert.Equal("ProxyEntry:Limits:MaxRequestHeadersBytes", TunnelServer.Configuration.CommandLine.SwitchMappings["--max-request-headers"]);
        Assert.Contains("--drain-timeout", TunnelClient.Configuration.CommandLine.HelpText, StringComparison.Ordinal);
        Assert.Contains("--drain-timeout", TunnelServer.Configuration.CommandLine.HelpText, StringComparison.Ordinal);
        Assert.Contains("--max-request-headers", TunnelServer.Configuration.CommandLine.HelpText, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0, 30)]
    [InlineData(5, 30)]
    [InlineData(30, 40)]
    [InlineData(120, 130)]
    public void A_host_allows_the_whole_drain_before_it_gives_up_stopping(int drainSeconds, int expectedSeconds)
    {
        Assert.Equal(TimeSpan.FromSeconds(expectedSeconds), HostStop.ShutdownTimeout(TimeSpan.FromSeconds(drainSeconds)));
    }

    [Fact]
    public void The_client_host_takes_its_stop_budget_from_the_drain_timeout()
    {
        using IHost host = TunnelClientApp.Create(["--session", "s", "--token", "t", "--drain-timeout", "00:02:00"]);

        Assert.Equal(TimeSpan.FromSeconds(130), host.Services.GetRequiredService<IOptions<HostOptions>>().Value.ShutdownTimeout);
    }

    [Fact]
    public void An_invalid_drain_timeout_fails_the_client_at_start()
    {
        var failure = Assert.Throws<OptionsValidationException>(() => TunnelClientApp.Create(["--session", "s", "--token", "t", "--drain-timeout", "02:00:00"]));
        Assert.Contains(failure.Failures, f => f.Contains("DrainTimeout", StringComparison.Ordinal));
    }

    [Fact]
    public void The_server_host_takes_its_stop_budget_from_the_drain_timeout()
    {
        using WebApplication app = TunnelServerApp.Create(["--TunnelServer:Token=12345678", "--drain-timeout", "00:02:00"]);

        Assert.Equal(TimeSpan.FromSeconds(130), app.Services.GetRequiredService<IOptions<HostOptions>>().Value.ShutdownTimeout);
    }

    [Fact]
    public void An_invalid_drain_timeout_fails_the_server_at_start()
    {
        var failure = Assert.Throws<OptionsValidationException>(() => TunnelServerApp.Create(["--TunnelServer:Token=12345678", "--drain-timeout", "02:00:00"]));

        Assert.Contains(failure.Failures, f => f.Contains("TunnelServer:DrainTimeout", StringComparison.Ordinal));
    }
}
