using System.Net.Sockets;
using Tunnel2.Hosting;

namespace Tunnel2.UnitTests.Hosting;

/// <summary>A port in use is told as the option that sets it, in one line.</summary>
public sealed class ListenerOptionsTests
{
    private static readonly ListenerOptions Server = new(
    [
        KeyValuePair.Create("--public-url", "http://0.0.0.0:12000"),
        KeyValuePair.Create("--tunnel-url", "http://0.0.0.0:12001"),
    ]);

    [Theory]
    [InlineData("http://0.0.0.0:12000", "--public-url")]
    [InlineData("http://0.0.0.0:12001", "--tunnel-url")]
    public void A_bind_failure_names_the_listeners_option_and_value(string bound, string option)
    {
        var failure = new IOException(ListenerOptions.BindFailure(bound), new SocketException((int)SocketError.AddressAlreadyInUse));

        Assert.Equal($"error: {option} {bound}: address already in use; choose another port or stop the process using it", Server.InUseLine(failure));
    }

    [Fact]
    public void A_bind_failure_on_a_port_no_option_names_is_told_in_the_sockets_words()
    {
        var failure = new IOException("Failed to bind to address http://127.0.0.1:9: address already in use.", new SocketException((int)SocketError.AddressAlreadyInUse));

        Assert.Equal($"error: {new SocketException((int)SocketError.AddressAlreadyInUse).Message}; choose another port or stop the process using it", Server.InUseLine(failure));
    }

    [Fact]
    public void Any_other_failure_is_not_a_port_in_use()
    {
        Assert.Null(Server.InUseLine(new IOException("Failed to bind to address http://0.0.0.0:12000: permission denied.",
            new SocketException((int)SocketError.AccessDenied))));
        Assert.False(ListenerOptions.IsAddressInUse(null));
    }

    [Theory]
    [InlineData("0.2.0+78cf7c9a", "0.2.0")]
    [InlineData("1.0.0-rc.1", "1.0.0-rc.1")]
    [InlineData(null, null)]
    public void The_version_drops_the_builds_commit_suffix(string? informational, string? expected) =>
        Assert.Equal(expected, ProductVersion.Strip(informational));
}
