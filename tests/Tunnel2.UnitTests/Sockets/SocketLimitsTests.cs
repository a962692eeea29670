using System.Net;
using System.Net.Sockets;
using Tunnel2.Hosting.Sockets;

namespace Tunnel2.UnitTests.Sockets;

/// <summary>The kernel-side bounds the tunnel puts on its own sockets, read back from real loopback sockets (Linux, where CI runs).</summary>
public sealed class SocketLimitsTests
{
    [Fact]
    public async Task An_accepted_socket_inherits_the_unsent_limit_of_its_listener()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        Assert.True(UnsentBytesLimit.TryApply(listener, 96 * 1024));
        listener.Listen();

        using var dialer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await dialer.ConnectAsync(listener.LocalEndPoint!);
        using Socket accepted = await listener.AcceptAsync();

        Assert.Equal(96 * 1024, UnsentBytesLimit.Read(accepted));
        Assert.NotEqual(96 * 1024, UnsentBytesLimit.Read(dialer));
    }

    [Fact]
    public void Zero_leaves_the_system_defaults_alone()
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        int receiveBuffer = socket.ReceiveBufferSize;

        Assert.False(UnsentBytesLimit.TryApply(socket, 0));
        Assert.False(UplinkReceiveBuffer.TryApply(socket, 0));
        Assert.False(UplinkSegmentSize.TryApply(socket, 0));
        Assert.Equal(receiveBuffer, socket.ReceiveBufferSize);
    }

    [Fact]
    public void The_uplink_receive_buffer_is_set_on_the_socket()
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);

        Assert.True(UplinkReceiveBuffer.TryApply(socket, UplinkReceiveBuffer.Default));

        // Linux doubles what it is given for its own bookkeeping; other systems keep it as asked.
        Assert.InRange(socket.ReceiveBufferSize, UplinkReceiveBuffer.Default, 2 * UplinkReceiveBuffer.Default);
    }

    [Fact]
    public async Task The_uplink_segment_size_bounds_what_a_loopback_peer_sends()
    {
        if (!OperatingSystem.IsLinux())
        {
            return; // TCP_MAXSEG is set on Linux only
        }

        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        Assert.True(UplinkSegmentSize.TryApply(listener, UplinkSegmentSize.Default));
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await client.ConnectAsync(listener.LocalEndPoint!);
        using Socket accepted = await listener.AcceptAsync();

        // Loopback's own MSS is ~64 KiB; the client learns the listener's 16 KiB from the handshake, and the accepted
        // socket inherits it.
        Assert.InRange(UplinkSegmentSize.Read(client), 1, UplinkSegmentSize.Default);
        Assert.InRange(UplinkSegmentSize.Read(accepted), 1, UplinkSegmentSize.Default);
    }
}
