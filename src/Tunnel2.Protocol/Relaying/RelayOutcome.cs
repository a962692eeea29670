namespace Tunnel2.Protocol.Relaying;

/// <summary>How one direction of a <see cref="DuplexRelay"/> ended.</summary>
public enum RelayOutcome
{
    /// <summary>Its source ended cleanly (a FIN, END_STREAM, or end of stream) and the end was passed on.</summary>
    Completed,

    /// <summary>It broke: a reset, a lost uplink, a socket or stream error (<see cref="DuplexRelayResult.Error"/>).</summary>
    Failed,

    /// <summary>It was stopped: the caller's token, or the relay itself once the other direction ended the exchange.</summary>
    Canceled,
}
