using System.Net;

namespace Tunnel2.Loops.Sockets;

/// <summary>A <see cref="LoopListener"/>'s owner, called on the loop.</summary>
public interface ILoopListenerHandler
{
    /// <summary>A new connection: a non-blocking descriptor the owner now owns (usually handed to <see cref="LoopSocket.Adopt(EventLoop, int, ILoopSocketHandler, int)"/>).</summary>
    void OnAccepted(LoopListener listener, int fd);

    /// <summary>A new connection from <paramref name="peer"/> (null for a family other than IPv4/IPv6), when the
    /// listener was made to read peer addresses; by default the same as the call without it.</summary>
    void OnAccepted(LoopListener listener, int fd, IPEndPoint? peer) => OnAccepted(listener, fd);

    /// <summary>accept failed for a reason other than "nothing pending" (e.g. out of descriptors); the listener pauses
    /// for a moment (a level-triggered listener would otherwise spin) and then goes on.</summary>
    void OnAcceptFailed(LoopListener listener, LoopError reason)
    {
    }
}
