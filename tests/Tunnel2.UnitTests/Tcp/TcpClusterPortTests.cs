using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.TunnelClient.Tcp;

namespace Tunnel2.UnitTests.Tcp;

/// <summary>
/// The client's side of "every node gives the session the same port": the first TCP login goes alone, and the port the
/// first server named is what every later login asks for.
/// </summary>
public sealed class TcpClusterPortTests
{
    [Fact]
    public async Task Logins_wait_for_the_first_until_a_port_is_known_then_ask_for_it_without_waiting()
    {
        using var port = new TcpClusterPort(NullLogger.Instance);

        Assert.True(await port.WaitForFirstLoginAsync(TestContext.Current.CancellationToken));
        ValueTask<bool> second = port.WaitForFirstLoginAsync(TestContext.Current.CancellationToken);
        Assert.False(second.IsCompleted); // the second node's login waits for the first's answer

        port.OnGiven("tunnel.example:20007", "node-1");
        port.EndFirstLogin();

        Assert.True(await second); // it had started waiting, so it still ends its turn …
        port.EndFirstLogin();
        Assert.Equal(20007, port.Wanted); // … and asks for node 1's port
        Assert.False(await port.WaitForFirstLoginAsync(TestContext.Current.CancellationToken)); // later logins do not wait
    }

    [Theory]
    [InlineData("[::1]:20008", 20008)]
    [InlineData("10.0.0.5:1", 1)]
    public void The_port_is_read_from_the_address_the_server_named(string address, int expected)
    {
        using var port = new TcpClusterPort(NullLogger.Instance);

        port.OnGiven(address, "node-1");
        port.OnGiven("10.0.0.6:30000", "node-2"); // a node that disagrees does not move the agreed port

        Assert.Equal(expected, port.Wanted);
    }
}
