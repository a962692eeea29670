namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>
/// Why a backend connection is closed instead of going back to the pool. <see cref="Suspicious"/> causes mean the backend
/// broke HTTP/1.1 framing (bytes it had no right to send): they are logged as warnings, since on a reused connection
/// those bytes would have become the next caller's response.
/// </summary>
internal readonly record struct CloseCause(string Name, bool Suspicious)
{
    /// <summary>The backend said <c>Connection: close</c> (or answered HTTP/1.0 without keep-alive).</summary>
    public static readonly CloseCause ConnectionClose = new("connection-close", false);

    /// <summary>A response with neither length nor chunked framing ends only when the backend closes.</summary>
    public static readonly CloseCause ReadUntilClose = new("read-until-close", false);

    /// <summary>The answer came before the whole request body went out: the connection is mid-request.</summary>
    public static readonly CloseCause RequestBodyUnfinished = new("request-body-unfinished", false);

    /// <summary>The exchange failed (backend cut off, bad framing, caller gone): the connection's state is unknown.</summary>
    public static readonly CloseCause ExchangeFailed = new("exchange-failed", false);

    /// <summary>The backend switched protocols (101): the connection carried an upgraded stream and ends with it.</summary>
    public static readonly CloseCause Upgraded = new("upgraded", false);

    /// <summary>The backend closed the connection right after the response.</summary>
    public static readonly CloseCause ClosedAfterResponse = new("closed-after-response", false);

    /// <summary>The backend closed the connection while it sat idle in the pool.</summary>
    public static readonly CloseCause ClosedWhileIdle = new("closed-while-idle", false);

    /// <summary>A clean connection came back while the pool already held its most idle connections (the concurrency limit).</summary>
    public static readonly CloseCause PoolFull = new("pool-full", false);

    /// <summary>The connection sat idle in the pool for longer than <c>TunnelClient:Backends:PooledConnectionIdleTimeout</c>.</summary>
    public static readonly CloseCause IdleTimeout = new("idle-timeout", false);

    /// <summary>Content-Length and Transfer-Encoding in one response: Transfer-Encoding frames it, then the connection goes (RFC 9112 §6.3).</summary>
    public static readonly CloseCause LengthAndTransferEncoding = new("length-and-transfer-encoding", true);

    /// <summary>Bytes beyond the end of the response as its framing delimits it (a second response, a body on HEAD/204/304, junk).</summary>
    public static readonly CloseCause BytesAfterResponse = new("bytes-after-response", true);

    /// <summary>Bytes the backend sent unasked while the connection sat idle in the pool.</summary>
    public static readonly CloseCause BytesWhileIdle = new("bytes-while-idle", true);
}
