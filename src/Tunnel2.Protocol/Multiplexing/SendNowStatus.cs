namespace Tunnel2.Protocol.Multiplexing;

/// <summary>What <see cref="IStreamHandle.TrySendFramesNow{TState}"/> did, or what it would have had to wait for.</summary>
public enum SendNowStatus
{
    /// <summary>Bytes were read and queued as Data frames.</summary>
    Sent,

    /// <summary>The source has ended: nothing was sent.</summary>
    Ended,

    /// <summary>The source had nothing to read now: nothing was sent (credit and budget went back).</summary>
    WouldBlock,

    /// <summary>The stream has no send credit (or has failed): wait for <see cref="IStreamHandle.NotifyOnSendCredit"/>.</summary>
    NoCredit,

    /// <summary>The uplink's queued-data budget is full: the read has to wait its turn (<see cref="IStreamHandle.SendFrameAsync{TState}"/>).</summary>
    NoBudget,
}
