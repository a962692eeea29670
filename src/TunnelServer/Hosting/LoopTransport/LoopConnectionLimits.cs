namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>What a connection's pipes may buffer before the side that fills them waits.</summary>
/// <param name="MaxReadBuffer">Request bytes read ahead of Kestrel (its MaxRequestBufferSize); reading pauses beyond it.</param>
/// <param name="MaxWriteBuffer">Response bytes Kestrel may flush ahead of the socket: its MaxResponseBufferSize plus a
/// stream window, since a tunnel body's bytes are held back by their stream's credit until sent (<see cref="LoopConnection"/>'s
/// send progress), so its flushes complete at once.</param>
internal readonly record struct LoopConnectionLimits(long MaxReadBuffer, long MaxWriteBuffer)
{
    /// <summary>Kestrel's limits (1 MiB in, 64 KiB out by default); 0 or less for a limit means none, as in Kestrel.</summary>
    /// <param name="streamWindow">The most a tunnel stream's credit lets into the output ahead of the socket.</param>
    public static LoopConnectionLimits From(long? maxRequestBuffer, long? maxResponseBuffer, long streamWindow) =>
        new(maxRequestBuffer ?? 0, maxResponseBuffer is > 0 and { } limit ? limit + streamWindow : 0);
}
