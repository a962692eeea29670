using System.ComponentModel.DataAnnotations;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>Where the server listens (section <c>TunnelServer:Listeners</c>), and the socket options of its listeners.</summary>
public sealed class ServerListenersOptions
{
    /// <summary>Where ProxyEntry takes public HTTP requests; an <c>https://</c> URL turns TLS on (HTTP/2 and HTTP/1.1 by ALPN).</summary>
    [Required]
    public string PublicUrl { get; set; } = "http://127.0.0.1:12000";

    /// <summary>Where clients open their uplinks; an <c>https://</c> URL turns TLS on.</summary>
    [Required]
    public string TunnelUrl { get; set; } = "http://127.0.0.1:12001";

    /// <summary>
    /// An optional second public listener, <c>http://</c>, that speaks cleartext HTTP/2 with prior knowledge only (h2c:
    /// a load balancer's <c>proto h2</c>, <c>curl --http2-prior-knowledge</c>, h2load). Kestrel cannot tell h2c from
    /// HTTP/1.1 on one cleartext port, hence a port of its own. An <c>https://</c> public URL offers HTTP/2 by ALPN anyway.
    /// </summary>
    public string? PublicH2cUrl { get; set; }

    /// <summary>
    /// TCP_NOTSENT_LOWAT on every socket of both listeners (public callers and uplinks): the most bytes each keeps queued
    /// unsent (0 = the system's default, unbounded up to tcp_wmem). Bounds the kernel memory slow callers park here.
    /// </summary>
    [Range(0, 64 * 1024 * 1024)]
    public int UnsentBytesLimit { get; set; } = Tunnel2.Hosting.Sockets.UnsentBytesLimit.Default;

    /// <summary>
    /// SO_RCVBUF of every public caller's socket (0 = the system's autotuning, up to tcp_rmem). What a caller whose
    /// upload the backend reads slowly can park in the kernel; a fixed size also caps one upload at about this many
    /// bytes per round trip, so set it only where many slow uploads meet a kernel short of TCP memory
    /// (docs/benchmarks/2026-11-27-slow-uploads.md).
    /// </summary>
    [Range(0, 64 * 1024 * 1024)]
    public int PublicReceiveBuffer { get; set; }

    /// <summary>
    /// The response bytes Kestrel may hold per public connection ahead of its socket before a write waits (the socket
    /// transport's MaxWriteBufferSize and Kestrel's MaxResponseBufferSize; Kestrel's default is 65536). A response body's
    /// Data payloads (up to 256 KiB) that do not fit are handed from the uplink's reader to a copy loop on the thread pool
    /// (docs/benchmarks/2026-11-30-download-buffer.md); a slow caller can park this much here. The loop transport (the
    /// default) allows this plus one stream window (1 MiB): there a tunnel body's credit goes back only once its bytes
    /// have been sent, so its flushes complete at once and a slow caller still holds no more than its window
    /// (docs/benchmarks/2026-11-30-download-sent-credit.md).
    /// </summary>
    [Range(16 * 1024, 64 * 1024 * 1024)]
    public int PublicResponseBuffer { get; set; } = DefaultPublicResponseBuffer;

    public const int DefaultPublicResponseBuffer = 64 * 1024;
}
