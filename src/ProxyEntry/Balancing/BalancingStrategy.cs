namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>How a request picks one of the clients serving its session.</summary>
public enum BalancingStrategy
{
    /// <summary>Each client in turn.</summary>
    RoundRobin,

    /// <summary>
    /// The less busy of two clients drawn at random (power of two choices), busy meaning streams open on its uplink:
    /// requests in flight, upgraded streams and bodies still streaming.
    /// </summary>
    LeastRequests,

    /// <summary>In turn, each client as often as the weight it declared at login (<c>--weight</c>), spread smoothly.</summary>
    Weighted,
}
