namespace Tunnel2.Hosting;

/// <summary>How long each host may take to stop, one rule for the server and the client.</summary>
public static class HostStop
{
    /// <summary>Time, after the drain, for the uplinks to close and Kestrel to stop.</summary>
    private static readonly TimeSpan AfterDrain = TimeSpan.FromSeconds(10);

    /// <summary>The .NET host's own default stop budget, which a short drain never lowers.</summary>
    private static readonly TimeSpan Floor = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The host's <c>HostOptions.ShutdownTimeout</c>: the whole drain plus time to close the uplinks, and never less
    /// than the .NET default. It bounds the stop; a host that finishes sooner stops sooner.
    /// </summary>
    public static TimeSpan ShutdownTimeout(TimeSpan drainTimeout) =>
        drainTimeout + AfterDrain > Floor ? drainTimeout + AfterDrain : Floor;
}
