namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>What a connection's pipes may buffer before the side that fills them waits: Kestrel's own limits.</summary>
/// <param name="MaxReadBuffer">Request bytes read ahead of Kestrel (its MaxRequestBufferSize); reading pauses beyond it.</param>
/// <param name="MaxWriteBuffer">Response bytes Kestrel may flush ahead of the socket (its MaxResponseBufferSize).</param>
internal readonly record struct LoopConnectionLimits(long MaxReadBuffer, long MaxWriteBuffer)
{
    /// <summary>Kestrel's defaults (1 MiB in, 64 KiB out); 0 or less for a limit means none, as in Kestrel.</summary>
    public static LoopConnectionLimits From(long? maxRequestBuffer, long? maxResponseBuffer) =>
        new(maxRequestBuffer ?? 0, maxResponseBuffer ?? 0);
}
