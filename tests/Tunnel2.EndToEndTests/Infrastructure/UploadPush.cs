using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>One caller of an upload storm: a 64 MiB body pushed as fast as the tunnel takes it, then a reset mid-body.</summary>
public static class UploadPush
{
    /// <summary>POSTs a 64 MiB body to <c>/session/{session}/upload</c>, each send as large as the socket takes, until stopped; then closes mid-body.</summary>
    public static async Task RunAsync(ProcessStack stack, CancellationToken stop)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(IPAddress.Loopback, stack.PublicUrl.Port);
        string head = $"POST /session/{stack.Session}/upload HTTP/1.1\r\nHost: storm\r\nContent-Length: {64 << 20}\r\n\r\n";
        await socket.SendAsync(Encoding.ASCII.GetBytes(head), SocketFlags.None);
        byte[] chunk = new byte[64 * 1024];
        try
        {
            while (true)
            {
                await socket.SendAsync(chunk, SocketFlags.None, stop);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // The storm is over: the caller goes away mid-body, with a reset, so what its socket still holds is dropped.
            socket.LingerState = new LingerOption(true, 0);
        }
    }
}
