using System.Net.Sockets;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>How a TCP caller the tunnel will not relay is closed.</summary>
internal static class TcpCallerClose
{
    /// <summary>At once, with a reset: the caller was refused, nothing was relayed and nothing will be.</summary>
    public static void Reset(Socket caller)
    {
        try
        {
            caller.LingerState = new LingerOption(true, 0);
        }
        catch (SocketException)
        {
            // already gone
        }

        caller.Dispose();
    }

    /// <summary>
    /// With a FIN, not a reset: the caller reached the tunnel and the tunnel found nowhere to take it (every client's
    /// target refused it), as HAProxy closes a TCP caller when every server refused.
    /// </summary>
    public static void Finish(Socket caller)
    {
        try
        {
            caller.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
            // already gone
        }

        caller.Dispose();
    }
}
