namespace Tunnel2.Balancing;

/// <summary>How a request picks one member: one of the clients serving its session, or one of a client's backends.</summary>
public enum BalancingStrategy
{
    /// <summary>Each member in turn.</summary>
    RoundRobin,

    /// <summary>
    /// The less busy of two members drawn at random (power of two choices). For a client, busy means streams open on its
    /// uplink (requests in flight, upgraded streams, bodies still streaming); for a backend, exchanges in flight.
    /// </summary>
    LeastRequests,

    /// <summary>
    /// In turn, each member as often as its weight, spread smoothly: a client's weight is declared at login
    /// (<c>--weight</c>), a backend's in its <c>--backend</c> entry.
    /// </summary>
    Weighted,
}
