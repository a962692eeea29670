namespace Tunnel2.Protocol.Multiplexing;

/// <summary>Which end of the uplink this is. Only the server opens streams; only the client answers them.</summary>
public enum UplinkRole
{
    Server,
    Client,
}
