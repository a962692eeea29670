using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Configuration;

namespace Tunnel2.ProxyEntry.Draining;

/// <summary>
/// The first moments of a node behind a balancer (<see cref="ProxyEntryOptions.WarmUp"/>): the node shares no state with
/// the others, so right after a start or restart it has no uplink for sessions whose clients are still waiting out their
/// reconnect delay. Until the warm-up ends it says it is not ready, and a session it does not know is "not yet" (503),
/// not "no such tunnel" (404), so a balancer takes the request elsewhere.
/// </summary>
public sealed class NodeWarmUp(IOptions<ProxyEntryOptions> options)
{
    private readonly long _durationMs = (long)options.Value.WarmUp.TotalMilliseconds;
    private long _startedAt = -1;

    /// <summary>The node listens from now on (called once the host has started).</summary>
    public void Begin() => Interlocked.CompareExchange(ref _startedAt, Environment.TickCount64, -1);

    /// <summary>Whether the node is still warming up (also before <see cref="Begin"/>, when there is a warm-up at all).</summary>
    public bool IsWarmingUp
    {
        get
        {
            if (_durationMs == 0)
            {
                return false;
            }

            long startedAt = Volatile.Read(ref _startedAt);
            return startedAt < 0 || Environment.TickCount64 - startedAt < _durationMs;
        }
    }
}
