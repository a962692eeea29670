namespace Tunnel2.Protocol.Multiplexing;

/// <summary>What <see cref="Uplink.TryOpenStream"/> did: the forwarding path branches on it instead of catching exceptions.</summary>
public enum StreamOpenStatus
{
    Opened,

    /// <summary>The uplink is closed or draining: another replica may take the request.</summary>
    UplinkClosed,

    /// <summary>The uplink already carries as many streams as the peer accepts: another replica may have room.</summary>
    AtStreamLimit,

    /// <summary>The encoded head does not fit in one frame: no uplink will take it.</summary>
    HeadTooLarge,
}
