namespace Tunnel2.Protocol.Relaying;

/// <summary>One side of a <see cref="DuplexRelay"/>.</summary>
public enum RelaySide
{
    /// <summary>The connection on this machine: a public caller (server side), a backend or TCP target (client side).</summary>
    Local,

    /// <summary>The stream's peer across the tunnel.</summary>
    Tunnel,
}
