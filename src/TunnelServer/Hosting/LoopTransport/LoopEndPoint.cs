using System.Net;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// An address Kestrel is to listen on through <see cref="LoopTransportFactory"/>: an <see cref="IPEndPoint"/> to every
/// other part of Kestrel, but one the loop's factory alone says it can bind, so that only the listener given this
/// address (the public plain-HTTP one) leaves the socket transport, whatever ports the others use.
/// </summary>
public sealed class LoopEndPoint(IPEndPoint at) : IPEndPoint(at.Address, at.Port);
