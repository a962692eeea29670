using System.ComponentModel.DataAnnotations;
using Tunnel2.Hosting.Configuration;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>
/// What one connection or one source address may cost the server's listeners before it is cut or refused (section
/// <c>TunnelServer:Limits</c>). Public requests' own limits (header and body sizes, rate limits) are ProxyEntry's.
/// </summary>
public sealed class ServerLimitsOptions
{
    /// <summary>
    /// How long a public caller may take to send a request's head (Kestrel's RequestHeadersTimeout): a slowloris
    /// connection that drips its head is closed after it.
    /// </summary>
    [TimeSpanRange("00:00:00.100", "00:10:00")]
    public TimeSpan RequestHeadersTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>How long a connection to the tunnel port may take to send its upgrade request; then it gets 408 and is closed.</summary>
    [TimeSpanRange("00:00:00.100", "00:05:00")]
    public TimeSpan HandshakeTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Failed logins (wrong or missing token) one source address may make per minute on the tunnel port; beyond them
    /// every login from it, right token included, gets 429 with Retry-After until a count has refilled (one every
    /// 60/N seconds). Each login is judged in one step, so parallel guesses cannot pass the limit either.
    /// </summary>
    [Range(1, 100_000)]
    public int MaxFailedLoginsPerMinute { get; set; } = 20;

    /// <summary>Uplinks one source address may hold at once (a client holds 1 to 16); more get 429 with Retry-After.</summary>
    [Range(1, 1_000_000)]
    public int MaxUplinksPerAddress { get; set; } = 1000;
}
