using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;

namespace Tunnel2.UnitTests.Balancing;

/// <summary>A balancing member with nothing behind it: a name, a weight, a load and a switch for whether it takes requests.</summary>
internal sealed class TestMember(string name, int weight = 1) : IBalancingMember
{
    public string Name { get; } = name;

    public int Weight { get; } = weight;

    public int Outstanding { get; set; }

    public bool Takes { get; set; } = true;

    public ulong KeyHash { get; } = AffinityKeys.Hash(name);

    public string AffinityKey => AffinityKeys.CookieValue(KeyHash);

    public bool CanTake(long now) => Takes;

    public override string ToString() => Name;
}

/// <summary>A request as a test spells it out: cookies and headers by name, the caller's address, the cookie's scope.</summary>
internal readonly struct TestRequest(
    Dictionary<string, string>? cookies = null,
    Dictionary<string, string>? headers = null,
    string? address = null,
    string cookiePath = "/",
    bool https = false) : IAffinityRequest
{
    public string? Cookie(string name) => cookies?.GetValueOrDefault(name);

    public string? Header(string name) => headers?.GetValueOrDefault(name);

    public string? ClientAddress() => address;

    public string CookiePath => cookiePath;

    public bool IsHttps => https;
}
