using System.Net.Sockets;
using Tunnel2.Loops;

namespace Tunnel2.ProxyEntry.Upgrades;

/// <summary>An upgraded caller's descriptor, let go by the public listener (<see cref="ICallerHandoverFeature"/>).</summary>
/// <param name="Loop">The loop the descriptor was on: the relay adopts it there.</param>
/// <param name="Fd">The caller's connected non-blocking descriptor, in no epoll set; its new owner closes it.</param>
/// <param name="Early">The caller's bytes read past the request head, before the 101 went out (usually none): they go
/// up first.</param>
public sealed record CallerHandover(EventLoop Loop, int Fd, byte[] Early)
{
    /// <summary>The descriptor as a runtime socket that owns it (the uplink's reader sends on it; its handle is counted).</summary>
#pragma warning disable CA2000 // the socket owns the handle, and the relay the socket: it disposes it as it ends
    public Socket ToSocket() => new(new SafeSocketHandle(Fd, ownsHandle: true));
#pragma warning restore CA2000
}
