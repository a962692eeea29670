using System.Diagnostics.Metrics;
using System.Net;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.Protocol.Tcp;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.ProxyEntry.Tcp;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Tcp;
using Tunnel2.TunnelServer.Diagnostics;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Tcp;

namespace Tunnel2.UnitTests.Tcp;

/// <summary>The TCP settings on both sides: the server's port range and fixed ports, the client's target and PROXY header.</summary>
public sealed class TcpSettingsTests
{
    [Theory]
    [InlineData("20000-20100", 20000, 20100)]
    [InlineData(" 5432 ", 5432, 5432)]
    [InlineData("1 - 65535", 1, 65535)]
    public void A_port_range_parses(string text, int first, int last)
    {
        Assert.True(TcpPortRange.TryParse(text, out TcpPortRange range, out _));
        Assert.Equal((first, last), (range.First, range.Last));
    }

    [Theory]
    [InlineData("")]
    [InlineData("0-10")]
    [InlineData("20100-20000")]
    [InlineData("20000-70000")]
    [InlineData("a-b")]
    public void A_bad_port_range_says_why(string text)
    {
        Assert.False(TcpPortRange.TryParse(text, out _, out string? error));
        Assert.False(string.IsNullOrEmpty(error));
    }

    [Theory]
    [InlineData("5432", "127.0.0.1", 5432)]
    [InlineData("db.internal:5432", "db.internal", 5432)]
    [InlineData("[::1]:22", "::1", 22)]
    [InlineData("10.0.0.5:6379", "10.0.0.5", 6379)]
    public void A_tcp_target_parses(string text, string host, int port)
    {
        TcpTarget? target = TcpTarget.Parse(text, out string? error);

        Assert.Null(error);
        Assert.Equal(new TcpTarget(host, port), target);
    }

    [Theory]
    [InlineData("")]
    [InlineData("db.internal")]
    [InlineData("db:0")]
    [InlineData("db:99999")]
    [InlineData("http://db:80/")]
    [InlineData("user@db:22")]
    public void A_bad_tcp_target_says_why(string text)
    {
        Assert.Null(TcpTarget.Parse(text, out string? error));
        Assert.False(string.IsNullOrEmpty(error));
    }

    [Fact]
    public void The_proxy_v2_header_names_the_caller_and_the_public_port_over_ipv4_and_ipv6()
    {
        TcpStreamOpen v4 = TcpStreamOpen.Of(new IPEndPoint(IPAddress.Parse("192.0.2.7"), 0x1234), new IPEndPoint(IPAddress.Parse("198.51.100.1"), 5432));
        byte[] header = new byte[ProxyProtocolV2.LengthOf(v4)];
        ProxyProtocolV2.Write(v4, header);
        Assert.Equal(Convert.FromHexString("0D0A0D0A000D0A515549540A" + "21" + "11" + "000C" + "C0000207" + "C6336401" + "1234" + "1538"), header);

        TcpStreamOpen v6 = TcpStreamOpen.Of(new IPEndPoint(IPAddress.Parse("2001:db8::7"), 1), new IPEndPoint(IPAddress.Parse("::1"), 2));
        header = new byte[ProxyProtocolV2.LengthOf(v6)];
        ProxyProtocolV2.Write(v6, header);
        Assert.Equal(52, header.Length);
        Assert.Equal(new byte[] { 0x21, 0x21, 0x00, 0x24 }, header[12..16]);
        Assert.Equal(IPAddress.Parse("2001:db8::7"), new IPAddress(header.AsSpan(16, 16)));
        Assert.Equal(new byte[] { 0, 1, 0, 2 }, header[48..52]);
    }

    [Fact]
    public void The_credentials_file_names_fixed_tcp_ports_and_refuses_bad_or_shared_ones()
    {
        Credentials good = Parse("""{ "TcpPorts": { "db-prod": 5432, "cache": 6379 } }""");
        Assert.Equal(5432, good.TcpPorts["db-prod"]);
        Assert.Equal(6379, good.TcpPorts["cache"]);

        var bad = Assert.Throws<InvalidDataException>(() => Parse("""{ "TcpPorts": { "a": 70000, "b": 22, "c": 22, "..": 1 } }"""));
        Assert.Contains("TcpPorts:a must be a port number", bad.Message, StringComparison.Ordinal);
        Assert.Contains("port 22 is already session 'b''s", bad.Message, StringComparison.Ordinal);
        Assert.Contains("'..' is not a session id", bad.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("0.0.0.0", "tunnel.example.com:12001", "tunnel.example.com:20001")]
    [InlineData("0.0.0.0", null, "0.0.0.0:20001")]
    [InlineData("192.0.2.1", "tunnel.example.com", "192.0.2.1:20001")]
    [InlineData("::", "[2001:db8::1]:12001", "[2001:db8::1]:20001")]
    public void The_public_address_names_the_host_the_client_dialled_when_the_port_listens_everywhere(string bound, string? dialled, string expected)
    {
        Assert.Equal(expected, TcpPublicAddress.For(IPAddress.Parse(bound), 20001, dialled));
    }

    [Fact]
    public void The_tcp_door_counts_on_the_servers_meter()
    {
        // The admin endpoint exports the server's meter by name: the door's instruments must sit on that same meter.
        using ServiceProvider services = new ServiceCollection().AddMetrics().BuildServiceProvider();
        IMeterFactory meters = services.GetRequiredService<IMeterFactory>();
        using TunnelServerMetrics server = new(meters, new SessionRegistry());
        _ = new TcpMetrics(meters);
        Dictionary<string, Meter> meterOf = [];
        using MeterListener listener = new();
        listener.InstrumentPublished = (instrument, _) =>
        {
            if (instrument.Meter.Scope == meters)
            {
                meterOf[instrument.Name] = instrument.Meter;
            }
        };
        listener.Start();

        Assert.Same(meterOf["tunnel2.server.uplinks"], meterOf["tunnel2.server.tcp.connections"]);
        Assert.Equal("Tunnel2.TunnelServer", meterOf["tunnel2.server.tcp.connections"].Name);
    }

    private static Credentials Parse(string json) => Credentials.Parse(new MemoryStream(Encoding.UTF8.GetBytes(json)));
}
