using System.ComponentModel.DataAnnotations;

namespace Tunnel2.ProxyEntry.Limits;

/// <summary>Limits on one public request (section <c>ProxyEntry:Limits</c>).</summary>
public sealed class RequestLimitsOptions
{
    public const int DefaultMaxRequestHeadersBytes = 32 * 1024;

    /// <summary>
    /// Largest request header block forwarded, in bytes (<c>name: value</c> plus CRLF per field); 431 beyond it. The
    /// server sets Kestrel's own limit on its listeners to twice this, so only heads far over it are cut by Kestrel.
    /// </summary>
    [Range(1024, 1024 * 1024)]
    public int MaxRequestHeadersBytes { get; set; } = DefaultMaxRequestHeadersBytes;

    /// <summary>Largest request body forwarded, in bytes (413 beyond it); null means no limit, as for a tunnel of files.</summary>
    [Range(0, long.MaxValue)]
    public long? MaxRequestBodySize { get; set; }
}
