namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The receive budget (docs/protocol.md §4): the credit this end has granted its peer over all streams and not yet
/// received stays within <see cref="UplinkSettings.ConnectionWindow"/> plus the initial window of each open stream.
/// Each stream's share shrinks as streams are added, so a crowd of slow streams holds a bounded total while a lone
/// stream may use up to <see cref="UplinkSettings.MaxStreamWindow"/>.
/// </summary>
public sealed partial class Uplink
{
    private long _receiveOutstanding;

    /// <summary>Credit granted and not yet used, over all streams (for tests and diagnostics).</summary>
    internal long ReceiveCreditOutstanding => Volatile.Read(ref _receiveOutstanding);

    /// <summary>The window one stream is topped up to right now: its share of the connection window.</summary>
    internal int StreamWindowTarget
    {
        get
        {
            long share = Settings.ConnectionWindow / Math.Max(1, ActiveStreamCount);
            return (int)Math.Clamp(share, Settings.InitialStreamWindow, Math.Max(Settings.InitialStreamWindow, Settings.MaxStreamWindow));
        }
    }

    /// <summary>A stream opened with its implicit initial credit, or the peer's data used some credit up (negative).</summary>
    internal void AddReceiveCredit(long bytes) => Interlocked.Add(ref _receiveOutstanding, bytes);

    /// <summary>
    /// Takes up to <paramref name="want"/> bytes of credit from the budget for one stream's WindowUpdate, and at least
    /// <paramref name="floor"/> (what tops the stream up to its initial window, which the budget always leaves room for).
    /// </summary>
    internal int ReserveReceiveCredit(int want, int floor)
    {
        long limit = Settings.ConnectionWindow + ((long)ActiveStreamCount * Settings.InitialStreamWindow);
        while (true)
        {
            long total = Volatile.Read(ref _receiveOutstanding);
            long grant = Math.Clamp(limit - total, floor, want);
            if (grant <= 0)
            {
                return 0;
            }

            if (Interlocked.CompareExchange(ref _receiveOutstanding, total + grant, total) == total)
            {
                return (int)grant;
            }
        }
    }
}
