namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The uplink's writer, whichever transport it has: a task over a pipe (<see cref="UplinkFrameWriter"/>) or the event
/// loop's turn end (<see cref="LoopUplinkTransport"/>). Either drains the <see cref="FrameScheduler"/> in its order.
/// </summary>
internal interface IUplinkWriter
{
    /// <summary>When the writer last handed bytes to the transport (<see cref="Environment.TickCount64"/>).</summary>
    long LastSentTicks { get; }

    /// <summary>Writes until the scheduler is completed and empty, or the transport fails (which closes the uplink).</summary>
    Task RunAsync();

    /// <summary>After queuing the last frame of a step: send soon (on this thread when that is cheap and allowed).</summary>
    void SendNowOrWake();

    /// <summary>The uplink closes: a write that waits for a peer that does not read must give up.</summary>
    void CancelPendingFlush();
}
