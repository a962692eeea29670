using System.ComponentModel.DataAnnotations;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>How the public listener carries its connections (section <c>TunnelServer:Public</c>; docs/protocol.md §9).</summary>
public sealed class ServerPublicOptions
{
    /// <summary>
    /// What carries the plain-HTTP public listener's connections (an http:// public URL; issue 52, stage 4a):
    /// <c>Loop</c> (the default), the server's one event loop, which accepts, reads and sends for Kestrel, which then
    /// parses and answers each request on the loop's thread, beside the uplinks (Linux on x86-64 only; elsewhere Sockets
    /// is used); <c>Sockets</c>, Kestrel's socket transport. An https:// public URL, the h2c and admin listeners always
    /// use Sockets.
    /// </summary>
    [Required(ErrorMessage = "TunnelServer:Public:Transport must be 'Sockets' or 'Loop'.")]
    [RegularExpression("^(Sockets|Loop)$", ErrorMessage = "TunnelServer:Public:Transport must be 'Sockets' or 'Loop'.")]
    public string Transport { get; set; } = TransportLoop;

    /// <summary>
    /// How an HTTP/1.1 upgrade (a WebSocket, any 101) is relayed once switched, when the public listener runs on the
    /// server's loop (Transport=Loop, an http:// public URL; else always Tasks, with a warning at start when Loop was
    /// set): <c>Loop</c> (the default), the caller's connection handed over from Kestrel to a relay on the loop (after
    /// the 101 has gone out whole), which moves its bytes as a TCP caller's are moved, with no task per message, and
    /// passes a caller's half-close on; <c>Tasks</c>, Kestrel's upgraded stream copied by a task each way on the thread
    /// pool (Kestrel ends it at a caller's half-close). HTTP/2 WebSockets always use Tasks.
    /// </summary>
    [Required(ErrorMessage = "TunnelServer:Public:UpgradeRelay must be 'Tasks' or 'Loop'.")]
    [RegularExpression("^(Tasks|Loop)$", ErrorMessage = "TunnelServer:Public:UpgradeRelay must be 'Tasks' or 'Loop'.")]
    public string UpgradeRelay { get; set; } = UpgradeRelayLoop;

    public const string UpgradeRelayTasks = "Tasks";

    public const string UpgradeRelayLoop = "Loop";

    /// <summary>Whether upgraded callers are relayed on the loop: chosen so, with the listener on the loop.</summary>
    public bool UpgradesOnLoop => UpgradeRelay == UpgradeRelayLoop && IsLoop;

    /// <summary>
    /// With the Loop transport: each public connection's start moves from Kestrel's thread-pool work item to the loop
    /// at once, so the connection's HTTP setup, its first request head's parse and ProxyEntry's stream open run in the
    /// loop's turn instead of in the pool's queue behind every other new connection's (issue 52 item 4, the storm's
    /// first second; docs/benchmarks/2026-11-30-storm-first-second-loop.md). Off by default while it is measured.
    /// </summary>
    public bool StartOnLoop { get; set; }

    /// <summary>
    /// With the Loop transport: the bytes the public connections may read in one loop turn once past each one's first
    /// read (request bodies, later requests), so that reading many uploads' bodies cannot fill a turn ahead of new
    /// callers' heads; a connection that finds it spent reads in the next turn. A connection's first read never waits.
    /// 0 (the default): no budget, each ready connection reads up to 16 KiB per turn.
    /// </summary>
    [Range(0, 64 * 1024 * 1024, ErrorMessage = "TunnelServer:Public:LoopReadBudget must be 0 (none) to 67108864 bytes per loop turn.")]
    public int LoopReadBudget { get; set; }

    public const string TransportSockets = "Sockets";

    public const string TransportLoop = "Loop";

    /// <summary>Whether the plain-HTTP public listener runs on the server's loop: chosen so, and a platform that has one.</summary>
    public bool IsLoop => Transport == TransportLoop && Tunnel2.Loops.EventLoop.IsSupported;
}
