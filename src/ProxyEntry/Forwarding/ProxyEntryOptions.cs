using System.ComponentModel.DataAnnotations;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>How the public side forwards requests; bound from the <c>ProxyEntry</c> configuration section.</summary>
public sealed class ProxyEntryOptions
{
    public const string SectionName = "ProxyEntry";

    /// <summary>A request whose response head has not arrived by then gets 504.</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "01:00:00")]
    public TimeSpan ResponseHeadTimeout { get; set; } = TimeSpan.FromSeconds(100);

    /// <summary>Largest request body forwarded, in bytes (413 beyond it); null means no limit, as for a tunnel of files.</summary>
    [Range(0, long.MaxValue)]
    public long? MaxRequestBodySize { get; set; }

    /// <summary>Value of <c>Retry-After</c> (seconds) on 503 answers.</summary>
    [Range(1, 3600)]
    public int RetryAfterSeconds { get; set; } = 1;
}
