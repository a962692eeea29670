namespace Tunnel2.ProxyEntry.Upgrades;

/// <summary>
/// A connection feature of a public listener whose connections live on the server's event loop
/// (<c>TunnelServer:Public:UpgradeRelay</c> = <c>Loop</c>): once a request has switched protocols (101), the caller's
/// descriptor can leave Kestrel for a relay on that same loop (<see cref="LoopUpgradedCaller"/>), with no task per read.
/// Absent: the task relay.
/// </summary>
public interface ICallerHandoverFeature
{
    /// <summary>
    /// From any thread, after the 101 was flushed: the connection's output is sent to the last byte (the 101 whole), the
    /// bytes Kestrel read past the request head are taken out of its input, and the descriptor leaves the connection's
    /// socket and the loop's epoll set, still open. From then Kestrel's connection no longer reads or writes it, nor
    /// closes it; its end (the request's) leaves the descriptor alone. An abort of the connection (Kestrel's stop) still
    /// fires its ConnectionClosed, which the relay listens to.
    /// </summary>
    /// <returns>The descriptor handed over; null when it cannot be (the connection has ended, or Kestrel is reading its
    /// input): then the connection stays Kestrel's, untouched, for the task relay.</returns>
    Task<CallerHandover?> HandOverAsync();
}
