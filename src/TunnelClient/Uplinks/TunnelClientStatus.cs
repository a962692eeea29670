namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>What the client is doing, for logs, tests and the exit code.</summary>
public sealed class TunnelClientStatus
{
    private int _connected;
    private int _connects;
    private long _relayed;

    public bool IsConnected => Volatile.Read(ref _connected) == 1;

    /// <summary>How many times an uplink was established.</summary>
    public int ConnectCount => Volatile.Read(ref _connects);

    /// <summary>Requests handed to the backend since start.</summary>
    public long RequestsRelayed => Interlocked.Read(ref _relayed);

    public string? LastDisconnectReason { get; private set; }

    /// <summary>The process exit code the client asks for (3 when the token was refused).</summary>
    public int ExitCode { get; internal set; }

    internal void OnConnected()
    {
        Interlocked.Increment(ref _connects);
        Volatile.Write(ref _connected, 1);
    }

    internal void OnDisconnected(string reason)
    {
        LastDisconnectReason = reason;
        Volatile.Write(ref _connected, 0);
    }

    internal void OnRequestRelayed() => Interlocked.Increment(ref _relayed);
}
