using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.TunnelServer.Tcp;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>What the TCP tunnel tests share: a stack whose server gives TCP ports, a client with <c>--tcp</c>, and callers.</summary>
internal static class TcpTunnel
{
    /// <summary>The TCP relay's log lines (Information) reach the captured logs; the rest stays at the stack's Warning.</summary>
    public const string TcpLogs = "--Serilog:MinimumLevel:Override:Tunnel2.TunnelServer.Tcp=Information";

    /// <summary>A port range of its own per stack, below the kernel's ephemeral range, so parallel tests rarely meet.</summary>
    public static string PortRange()
    {
        int first = 20_000 + (Random.Shared.Next(0, 240) * 50);
        return $"--TunnelServer:Tcp:PortRange={first}-{first + 49}";
    }

    /// <summary>The server's TCP engine (issue 52, stage 2b): its callers on the event loop (the default) or the runtime's sockets.</summary>
    public static string ServerEngine(string engine) => $"--TunnelServer:Tcp:Engine={engine}";

    /// <summary>The server process's callers' loop never faulted: a blocking call made on it (the guard trips) or any other exception a callback threw.</summary>
    public static void AssertNoLoopFault(TunnelProcess server) =>
        Assert.DoesNotContain("The server's event loop: a callback failed", server.Output, StringComparison.Ordinal);

    public static Task<TunnelStack> StartStackAsync(params string[] serverArgs) =>
        TunnelStack.StartAsync([PortRange(), TcpLogs, .. serverArgs]);

    /// <summary>Starts a client serving <paramref name="target"/> over TCP and returns the session's public TCP port.</summary>
    public static async Task<int> StartClientAsync(TunnelStack stack, string session, ScriptedTcpTarget target, params string[] extraArgs)
    {
        await stack.StartClientAsync(session, backend: null, token: null, maxConcurrency: 100, ["--tcp", target.Address, .. extraArgs]);
        return PortOf(stack, session) ?? throw new InvalidOperationException($"session {session} has no TCP port");
    }

    public static int? PortOf(TunnelStack stack, string session) => stack.Server.Services.GetRequiredService<TcpSessions>().PortOf(session);

    public static int OpenConnections(TunnelStack stack, string session) => stack.Server.Services.GetRequiredService<TcpSessions>().OpenConnections(session);

    public static async Task<Socket> ConnectAsync(int port)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port));
        return socket;
    }

    /// <summary>Reads exactly <paramref name="count"/> bytes, or fewer if the connection ends first.</summary>
    public static async Task<byte[]> ReadAsync(Socket socket, int count)
    {
        byte[] buffer = new byte[count];
        int filled = 0;
        while (filled < count)
        {
            int read = await socket.ReceiveAsync(buffer.AsMemory(filled));
            if (read == 0)
            {
                return buffer[..filled];
            }

            filled += read;
        }

        return buffer;
    }

    /// <summary>True once the connection has ended (FIN or reset), within <paramref name="timeout"/>; bytes still arriving are read and dropped.</summary>
    public static async Task<bool> EndsWithinAsync(Socket socket, TimeSpan timeout)
    {
        using var deadline = new CancellationTokenSource(timeout);
        byte[] buffer = new byte[16 * 1024];
        try
        {
            while (await socket.ReceiveAsync(buffer, deadline.Token) > 0)
            {
            }

            return true;
        }
        catch (SocketException)
        {
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    /// <summary>
    /// True when a new connection to <paramref name="port"/> is cut within the timeout, after sending <paramref name="bytes"/>:
    /// a reset may even reach the connect itself, on loopback the server refuses that fast.
    /// </summary>
    public static async Task<bool> IsCutAsync(int port, byte[] bytes, TimeSpan timeout)
    {
        Socket socket;
        try
        {
            socket = await ConnectAsync(port);
        }
        catch (SocketException)
        {
            return true;
        }

        using (socket)
        {
            try
            {
                await socket.SendAsync(bytes);
            }
            catch (SocketException)
            {
                return true;
            }

            return await EndsWithinAsync(socket, timeout);
        }
    }

    public static bool Logged(string session, string fragment) =>
        CapturedLogs.MessagesWhere("Session", session).Exists(line => line.Contains(fragment, StringComparison.Ordinal));
}
