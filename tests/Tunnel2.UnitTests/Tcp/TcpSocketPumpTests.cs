using System.Net;
using System.Net.Sockets;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Tcp;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Tcp;

/// <summary>
/// The TCP relays' two halves over an uplink pair and real loopback sockets: <see cref="SocketToStream"/> (a socket's
/// bytes into Data frames) and <see cref="UplinkStream.CopyInputToAsync(Socket, CancellationToken)"/> (a stream's bytes
/// into a socket), each way in turn with a half-close in between.
/// </summary>
public sealed class TcpSocketPumpTests
{
    private static readonly TcpStreamOpen Open = TcpStreamOpen.Of(new IPEndPoint(IPAddress.Loopback, 50123), new IPEndPoint(IPAddress.Loopback, 20001));

    [Fact]
    public async Task Megabytes_cross_byte_exact_each_way_and_each_FIN_arrives_after_the_last_byte()
    {
        await using var pair = UplinkPair.Start();
        (Socket caller, Socket callerSide) = await ConnectedPairAsync();
        (Socket target, Socket targetSide) = await ConnectedPairAsync();
        using (caller)
        using (callerSide)
        using (target)
        using (targetSide)
        {
            Assert.Equal(StreamOpenStatus.Opened, pair.Server.TryOpenTcpStream(Open, out UplinkStream? server));
            UplinkStream client = await pair.Handler.NextAsync();
            Task[] halves =
            [
                SocketToStream.PumpAsync(callerSide, server!),
                CopyThenShutdownAsync(server!, callerSide),
                SocketToStream.PumpAsync(targetSide, client),
                CopyThenShutdownAsync(client, targetSide),
            ];

            byte[] up = RandomBytes(3 * 1024 * 1024 + 17);
            Task<byte[]> received = ReadToEndAsync(target);
            await caller.SendAsync(up, SocketFlags.None);
            caller.Shutdown(SocketShutdown.Send);
            Assert.Equal(up, await received.WaitAsync(TimeSpan.FromSeconds(30)));

            // The target still answers after the caller's half-close.
            byte[] down = RandomBytes(2 * 1024 * 1024 + 5);
            received = ReadToEndAsync(caller);
            await target.SendAsync(down, SocketFlags.None);
            target.Shutdown(SocketShutdown.Send);
            Assert.Equal(down, await received.WaitAsync(TimeSpan.FromSeconds(30)));

            await Task.WhenAll(halves).WaitAsync(TimeSpan.FromSeconds(10));
            Assert.Equal(up.Length, server!.SentBytes);
            Assert.Equal(down.Length, client.SentBytes);
            server.Dispose();
            client.Dispose();
        }
    }

    private static async Task CopyThenShutdownAsync(UplinkStream stream, Socket socket)
    {
        await stream.CopyInputToAsync(socket, CancellationToken.None);
        socket.Shutdown(SocketShutdown.Send);
    }

    private static async Task<(Socket Outer, Socket Inner)> ConnectedPairAsync()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        var outer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        Task<Socket> accepted = listener.AcceptAsync();
        await outer.ConnectAsync(listener.LocalEndPoint!);
        return (outer, await accepted);
    }

    private static async Task<byte[]> ReadToEndAsync(Socket socket)
    {
        using var all = new MemoryStream();
        byte[] buffer = new byte[64 * 1024];
        int read;
        while ((read = await socket.ReceiveAsync(buffer, SocketFlags.None)) > 0)
        {
            all.Write(buffer, 0, read);
        }

        return all.ToArray();
    }

    private static byte[] RandomBytes(int length)
    {
        byte[] bytes = new byte[length];
        Random.Shared.NextBytes(bytes);
        return bytes;
    }
}
