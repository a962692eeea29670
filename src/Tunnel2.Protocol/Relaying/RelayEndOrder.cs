using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.Protocol.Relaying;

/// <summary>
/// Which direction of a <see cref="DuplexRelay"/> ended first, noted as each ends rather than read from which task
/// completed first: a direction's task completes only after it has passed its end on (the half-close, END_STREAM), and
/// on a busy machine the far side may already have answered that end, and so ended the other direction, before the
/// task's completion is seen. The first note wins.
/// </summary>
internal sealed class RelayEndOrder
{
    private const int None = -1;

    private int _first = None;

    /// <summary>The side noted first, null before either direction ended.</summary>
    public RelaySide? First => Volatile.Read(ref _first) is var first and not None ? (RelaySide)first : null;

    /// <summary>A direction ended (cleanly or not); a later note of the other changes nothing.</summary>
    public void Note(RelaySide side) => Interlocked.CompareExchange(ref _first, (int)side, None);

    /// <summary>
    /// The tunnel's end came, before it is passed on: unless this side's own END_STREAM went out before it (the local
    /// direction ended first, its task just not done yet), the tunnel's direction ended first.
    /// </summary>
    public void NoteTunnelEnd(IByteStream stream) => Note(stream.HasSentEnd ? RelaySide.Local : RelaySide.Tunnel);
}
