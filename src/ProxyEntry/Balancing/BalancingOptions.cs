using System.ComponentModel.DataAnnotations;
using Tunnel2.Balancing;
using Tunnel2.Balancing.Health;
using Tunnel2.Hosting.Configuration;

namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>
/// How requests spread over the clients of a session, and when a client is passed over (section
/// <c>ProxyEntry:Balancing</c>): a default strategy and affinity (a session's own are in <c>ProxyEntry:Sessions</c>), and passive ejection of a client
/// whose backend keeps failing.
/// </summary>
public sealed class BalancingOptions
{
    public const string DefaultAffinityCookie = "Tunnel2-Affinity";

    /// <summary>How a session's requests spread over its clients.</summary>
    public BalancingStrategy Strategy { get; set; } = BalancingStrategy.RoundRobin;

    /// <summary>What keeps a caller on one client.</summary>
    public AffinityMode Affinity { get; set; } = AffinityMode.None;

    /// <summary>The header whose value is hashed when <see cref="Affinity"/> is <see cref="AffinityMode.Header"/>.</summary>
    public string? AffinityHeader { get; set; }

    /// <summary>The cookie's name when <see cref="Affinity"/> is <see cref="AffinityMode.Cookie"/>.</summary>
    [RegularExpression("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$", ErrorMessage = "ProxyEntry:Balancing:AffinityCookie must be a cookie name (an RFC 9110 token).")]
    public string AffinityCookie { get; set; } = DefaultAffinityCookie;

    /// <summary>
    /// After this many answers in a row that say the client could not reach its backend, the client is passed over for
    /// <see cref="EjectionBackoff"/>, doubled on each ejection that follows without a good answer between, up to
    /// <see cref="MaxEjectionBackoff"/>. 0 turns passive ejection off.
    /// </summary>
    [Range(0, 1000)]
    public int EjectAfter { get; set; } = 3;

    /// <summary>How long an ejected client is first passed over.</summary>
    [TimeSpanRange("00:00:00.010", "01:00:00")]
    public TimeSpan EjectionBackoff { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The longest an ejected client is passed over, however often it is ejected in a row.</summary>
    [TimeSpanRange("00:00:00.010", "01:00:00")]
    public TimeSpan MaxEjectionBackoff { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The policy of a session with no entry of its own in <c>ProxyEntry:Sessions</c>.</summary>
    public BalancingPolicy DefaultPolicy() => new(Strategy, Affinity, AffinityHeader, AffinityCookie);

    /// <summary>The ejection settings as the balancing library takes them.</summary>
    public EjectionOptions Ejection() => new(EjectAfter, EjectionBackoff, MaxEjectionBackoff);

    /// <summary>What is wrong with the settings as a whole (the annotations check each value alone).</summary>
    public IEnumerable<string> Problems()
    {
        if (Affinity == AffinityMode.Header && string.IsNullOrWhiteSpace(AffinityHeader))
        {
            yield return "ProxyEntry:Balancing:Affinity is Header but ProxyEntry:Balancing:AffinityHeader names no header.";
        }

        if (Ejection().Problem is { } ejection)
        {
            yield return $"ProxyEntry:Balancing:{ejection}.";
        }
    }
}
