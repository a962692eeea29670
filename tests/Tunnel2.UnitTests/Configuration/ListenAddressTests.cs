using System.Net;
using Tunnel2.Hosting;

namespace Tunnel2.UnitTests.Configuration;

public sealed class ListenAddressTests
{
    [Theory]
    [InlineData("http://127.0.0.1:0", "127.0.0.1", 0)]
    [InlineData("http://127.0.0.1:12000", "127.0.0.1", 12000)]
    [InlineData("http://127.0.0.1:12000/", "127.0.0.1", 12000)]
    [InlineData("http://0.0.0.0:8080", "0.0.0.0", 8080)]
    [InlineData("http://*:8080", "0.0.0.0", 8080)]
    [InlineData("http://+:8080", "0.0.0.0", 8080)]
    [InlineData("http://[::1]:0", "::1", 0)]
    [InlineData("http://[::]:9000", "::", 9000)]
    [InlineData("http://10.1.2.3", "10.1.2.3", 80)]
    public void Parses_ip_addresses_and_wildcards(string url, string ip, int port)
    {
        Assert.True(ListenAddress.TryParse(url, out ListenAddress? address, out string? error));

        Assert.Null(error);
        Assert.Equal(IPAddress.Parse(ip), address.Address);
        Assert.False(address.IsLocalhost);
        Assert.Equal(port, address.Port);
    }

    [Theory]
    [InlineData("http://localhost:0", 0)]
    [InlineData("http://LOCALHOST:5000", 5000)]
    public void Parses_localhost_without_an_address(string url, int port)
    {
        Assert.True(ListenAddress.TryParse(url, out ListenAddress? address, out _));

        Assert.True(address.IsLocalhost);
        Assert.Null(address.Address);
        Assert.Equal(port, address.Port);
    }

    [Fact]
    public void An_https_url_is_marked_for_TLS()
    {
        Assert.True(ListenAddress.TryParse("https://127.0.0.1:8443", out ListenAddress? https, out _));
        Assert.True(ListenAddress.TryParse("http://127.0.0.1:8080", out ListenAddress? http, out _));

        Assert.True(https.IsHttps);
        Assert.Equal(8443, https.Port);
        Assert.False(http.IsHttps);
    }

    [Theory]
    [InlineData(null, "http://")]
    [InlineData("", "http://")]
    [InlineData("garbage", "http://")]
    [InlineData("ftp://127.0.0.1:1", "http://")]
    [InlineData("http://127.0.0.1:1/x", "path")]
    [InlineData("http://my-host:1", "IP address or localhost")]
    public void Refuses_anything_else_with_a_reason(string? url, string reasonPart)
    {
        Assert.False(ListenAddress.TryParse(url, out ListenAddress? address, out string? error));

        Assert.Null(address);
        Assert.Contains(reasonPart, error, StringComparison.Ordinal);
    }
}
