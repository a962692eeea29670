using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;

namespace Tunnel2.RelayPrototypes;

/// <summary>
/// Design (b), rathole's: one data connection per caller, no frames and no windows (TCP does the flow control and the
/// kernel the multiplexing). The agent keeps <see cref="PoolSize"/> connections to the entry dialled ahead; the entry
/// gives each caller an idle one and writes one start byte on it, upon which the agent dials the target, dials a
/// replacement, and both sides copy two ways with async socket calls.
/// </summary>
internal static class PoolRelay
{
    /// <summary>rathole's TCP_POOL_SIZE.</summary>
    public const int PoolSize = 8;

    private const byte Start = 1;

    public static async Task RunEntryAsync(IPEndPoint listen, IPEndPoint link)
    {
        using var callers = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        callers.Bind(listen);
        callers.Listen(4096);
        using var dataListener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        dataListener.Bind(link);
        dataListener.Listen(4096);
        var idle = Channel.CreateUnbounded<Socket>();
        _ = AcceptDataAsync(dataListener, idle.Writer);
        while (true)
        {
            var caller = await callers.AcceptAsync();
            caller.NoDelay = true;
            var data = await idle.Reader.ReadAsync();
            _ = StartAsync(caller, data);
        }
    }

    private static async Task AcceptDataAsync(Socket listener, ChannelWriter<Socket> idle)
    {
        while (true)
        {
            var data = await listener.AcceptAsync();
            data.NoDelay = true;
            idle.TryWrite(data);
        }
    }

    private static async Task StartAsync(Socket caller, Socket data)
    {
        try
        {
            await data.SendAsync(new[] { Start }, SocketFlags.None);
        }
        catch (SocketException)
        {
            caller.Dispose();
            data.Dispose();
            return;
        }
        await CopyBothWaysAsync(caller, data);
    }

    public static async Task RunAgentAsync(IPEndPoint link, IPEndPoint target)
    {
        for (int i = 0; i < PoolSize; i++)
        {
            _ = IdleAsync(link, target);
        }
        await Task.Delay(Timeout.Infinite);
    }

    /// <summary>One pooled data connection: dialled, then idle until the entry's start byte.</summary>
    private static async Task IdleAsync(IPEndPoint link, IPEndPoint target)
    {
        var data = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            await data.ConnectAsync(link);
            byte[] start = new byte[1];
            if (await data.ReceiveAsync(start, SocketFlags.None) != 1)
            {
                throw new SocketException((int)SocketError.ConnectionReset);
            }
        }
        catch (SocketException e)
        {
            Console.Error.WriteLine($"data connection: {e.SocketErrorCode}");
            data.Dispose();
            await Task.Delay(1000);
            _ = IdleAsync(link, target);
            return;
        }
        _ = IdleAsync(link, target);   // the replacement
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            await socket.ConnectAsync(target);
        }
        catch (SocketException)
        {
            socket.Dispose();
            data.Dispose();
            return;
        }
        await CopyBothWaysAsync(data, socket);
    }

    private static async Task CopyBothWaysAsync(Socket a, Socket b)
    {
        await Task.WhenAll(CopyAsync(a, b), CopyAsync(b, a));
        a.Dispose();
        b.Dispose();
    }

    /// <summary>Receive, send, until the end of the stream, which is passed on as a half-close.</summary>
    private static async Task CopyAsync(Socket from, Socket to)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(Frame.MaxPayload);
        try
        {
            int n;
            while ((n = await from.ReceiveAsync(buffer, SocketFlags.None)) > 0)
            {
                await to.SendAsync(buffer.AsMemory(0, n), SocketFlags.None);
            }
            to.Shutdown(SocketShutdown.Send);
        }
        catch (SocketException)
        {
            // a reset on either side ends both directions
            from.Dispose();
            to.Dispose();
        }
        catch (ObjectDisposedException)
        {
            // the other direction failed first
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
