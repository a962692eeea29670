using Microsoft.Extensions.Configuration;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelServer.Configuration;
using ClientCommandLine = Tunnel2.TunnelClient.Configuration.CommandLine;
using ClientLegacyKeys = Tunnel2.TunnelClient.Configuration.LegacyKeys;
using ServerCommandLine = Tunnel2.TunnelServer.Configuration.CommandLine;
using ServerLegacyKeys = Tunnel2.TunnelServer.Configuration.LegacyKeys;

namespace Tunnel2.UnitTests.Hosting;

/// <summary>The flat keys of the previous release, taken for one more: each lands on its grouped key, which wins when both are set.</summary>
public sealed class RenamedKeysTests
{
    private static ConfigurationManager Configuration(IEnumerable<KeyValuePair<string, string?>> appsettings, params string[] args)
    {
        var configuration = new ConfigurationManager();
        configuration.AddInMemoryCollection(appsettings);
        configuration.AddCommandLine(args);
        return configuration;
    }

    [Fact]
    public void Old_server_keys_from_appsettings_and_the_command_line_set_the_new_ones()
    {
        ConfigurationManager configuration = Configuration(
            [new("TunnelServer:MaxStreamsPerUplink", "7"), new("ProxyEntry:ResponseHeadTimeout", "00:00:05"), new("ProxyEntry:Hosts:app.example.org", "demo")],
            "--TunnelServer:AdminUrl=http://127.0.0.1:12002", "--ProxyEntry:MaxRequestHeadersBytes=2048");

        IReadOnlyList<KeyValuePair<string, string>> renamed = ServerLegacyKeys.Renamed.Apply(configuration);

        TunnelServerOptions server = configuration.GetSection(TunnelServerOptions.SectionName).Get<TunnelServerOptions>()!;
        ProxyEntryOptions proxy = configuration.GetSection(ProxyEntryOptions.SectionName).Get<ProxyEntryOptions>()!;
        Assert.Equal(7, server.Uplink.MaxStreams);
        Assert.Equal(TimeSpan.FromSeconds(5), server.Uplink.ResponseHeadTimeout); // moved from ProxyEntry to the uplink's section
        Assert.Equal("http://127.0.0.1:12002", server.Admin.Url);
        Assert.Equal(2048, proxy.Limits.MaxRequestHeadersBytes);
        Assert.Equal("demo", proxy.Routing.Hosts["app.example.org"]);
        Assert.Contains(new KeyValuePair<string, string>("TunnelServer:MaxStreamsPerUplink", "TunnelServer:Uplink:MaxStreams"), renamed);
        Assert.Contains(new KeyValuePair<string, string>("ProxyEntry:Hosts:app.example.org", "ProxyEntry:Routing:Hosts:app.example.org"), renamed);
        Assert.Equal(5, renamed.Count);
    }

    [Fact]
    public void A_new_key_set_anywhere_wins_over_its_old_key()
    {
        ConfigurationManager configuration = Configuration([new("TunnelClient:Limits:MaxQueue", "5")], "--TunnelClient:MaxQueue=3");

        ClientLegacyKeys.Renamed.Apply(configuration);

        Assert.Equal(5, configuration.GetSection(TunnelClientOptions.SectionName).Get<TunnelClientOptions>()!.Limits.MaxQueue);
    }

    [Fact]
    public void Old_client_keys_set_the_new_ones_and_nothing_else_is_renamed()
    {
        ConfigurationManager configuration = Configuration(
            [new("TunnelClient:Backend", "http://127.0.0.1:8081"), new("TunnelClient:Uplinks", "4"), new("TunnelClient:Session", "demo")],
            "--TunnelClient:InspectUrl=http://127.0.0.1:4040");

        IReadOnlyList<KeyValuePair<string, string>> renamed = ClientLegacyKeys.Renamed.Apply(configuration);

        TunnelClientOptions client = configuration.GetSection(TunnelClientOptions.SectionName).Get<TunnelClientOptions>()!;
        Assert.Equal("http://127.0.0.1:8081", client.Backends.Urls);
        Assert.Equal(4, client.Uplink.Count);
        Assert.Equal("http://127.0.0.1:4040", client.Inspector.Url);
        Assert.Equal("demo", client.Session);
        Assert.Equal(3, renamed.Count); // the session's key did not move
    }

    [Theory]
    [InlineData("TunnelClient:Backends:Balancing")]
    [InlineData("TunnelClient:BackendBalancing")]
    public void The_backends_old_balancing_keys_set_Strategy_the_key_the_server_uses_too(string oldKey)
    {
        ConfigurationManager configuration = Configuration([], $"--{oldKey}=Weighted");

        IReadOnlyList<KeyValuePair<string, string>> renamed = ClientLegacyKeys.Renamed.Apply(configuration);

        Assert.Equal(Tunnel2.Balancing.BalancingStrategy.Weighted,
            configuration.GetSection(TunnelClientOptions.SectionName).Get<TunnelClientOptions>()!.Backends.Strategy);
        Assert.Equal(new KeyValuePair<string, string>(oldKey, "TunnelClient:Backends:Strategy"), Assert.Single(renamed));
        Assert.Empty(ClientCommandLine.Spec.Problems([$"--{oldKey}=Weighted"]));
    }

    [Fact]
    public void The_command_line_takes_old_keys_but_still_refuses_unknown_ones()
    {
        Assert.Empty(ServerCommandLine.Spec.Problems(["--TunnelServer:MaxStreamsPerUplink=5", "--ProxyEntry:Hosts:a.example.org=demo"]));
        Assert.Empty(ClientCommandLine.Spec.Problems(["--TunnelClient:MaxQueue", "3", "--TunnelClient:Limits:MaxQueue=3"]));
        Assert.Single(ClientCommandLine.Spec.Problems(["--TunnelClient:MaxQeue=3"]));
    }

    [Theory]
    [InlineData("--TunnelServer:Uplink:MaxStreams=5", true)]
    [InlineData("--TunnelServer:Uplink:MaxStreamz=5", false)] // a mistyped key inside a group is refused too
    [InlineData("--ProxyEntry:Routing:Hosts:app.example.org=demo", true)]
    [InlineData("--ProxyEntry:Sessions:demo:Strategy=Weighted", true)]
    [InlineData("--ProxyEntry:Sessions:demo:RateLimit:PerSecond=5", true)]
    [InlineData("--ProxyEntry:Balancing:Sessions:demo:Strategy=Weighted", true)] // the old key, taken for one release
    [InlineData("--ProxyEntry:RateLimits:PerVisitor:Burst=10", true)]
    [InlineData("--ProxyEntry:RateLimits:PerVisitor:Bursts=10", false)]
    public void The_server_command_line_knows_every_grouped_key_in_full(string argument, bool known)
    {
        Assert.Equal(known, ServerCommandLine.Spec.Problems([argument]).Count == 0);
    }
}
