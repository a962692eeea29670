using System.Net;
using System.Net.Sockets;
using Tunnel2.TunnelClient.Uplinks;

namespace Tunnel2.UnitTests.ClientUplinks;

/// <summary>
/// The loop uplink's blocking connect tries a server name's addresses in turn, each on a new socket: .NET on Linux
/// refuses a second connect on a socket whose first failed, so one shared socket made the second address unreachable.
/// </summary>
public sealed class BlockingDialTests
{
    [Fact]
    public void An_address_that_refuses_is_followed_by_the_next_on_a_socket_of_its_own()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        int port = ((IPEndPoint)listener.LocalEndPoint!).Port;
        int created = 0;
        using var dial = new BlockingDial(() =>
        {
            created++;
            return new Socket(SocketType.Stream, ProtocolType.Tcp);
        });

        // 127.0.0.2 is loopback too, but nothing listens there on this port: it refuses.
        dial.Connect([IPAddress.Parse("127.0.0.2"), IPAddress.Loopback], port);

        using Socket accepted = listener.Accept();
        Assert.Equal(2, created);
        Assert.True(dial.Connected.Connected);
        Assert.Equal(((IPEndPoint)accepted.RemoteEndPoint!).Port, ((IPEndPoint)dial.Connected.LocalEndPoint!).Port);
    }

    [Fact]
    public void When_every_address_refuses_the_last_error_is_thrown()
    {
        int port = FreePort();
        using var dial = new BlockingDial(() => new Socket(SocketType.Stream, ProtocolType.Tcp));

        SocketException error = Assert.Throws<SocketException>(() => dial.Connect([IPAddress.Parse("127.0.0.2"), IPAddress.Loopback], port));

        Assert.Equal(SocketError.ConnectionRefused, error.SocketErrorCode);
    }

    [Fact]
    public void A_cancelled_dial_tries_no_further_address()
    {
        int created = 0;
        using var dial = new BlockingDial(() =>
        {
            created++;
            return new Socket(SocketType.Stream, ProtocolType.Tcp);
        });
        dial.Cancel();

        Assert.Throws<ObjectDisposedException>(() => dial.Connect([IPAddress.Loopback], FreePort()));
        Assert.Equal(0, created);
    }

    [Fact]
    public void A_taken_socket_is_not_closed_with_the_dial()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        var dial = new BlockingDial(() => new Socket(SocketType.Stream, ProtocolType.Tcp));
        dial.Connect([IPAddress.Loopback], ((IPEndPoint)listener.LocalEndPoint!).Port);

        using Socket taken = dial.Take();
        dial.Dispose();

        Assert.Equal(3, taken.Send("abc"u8));
    }

    private static int FreePort()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;
    }
}
