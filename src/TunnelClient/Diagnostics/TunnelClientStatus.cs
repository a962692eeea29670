using Tunnel2.Hosting;

namespace Tunnel2.TunnelClient.Diagnostics;

/// <summary>What the client is doing, for logs, tests and the exit code.</summary>
public sealed class TunnelClientStatus : IExitCodeSource
{
    private int _connectedUplinks;
    private int _connects;
    private long _relayed;

    /// <summary>Whether at least one uplink is up.</summary>
    public bool IsConnected => ConnectedUplinks > 0;

    /// <summary>How many of the client's uplinks are up now.</summary>
    public int ConnectedUplinks => Volatile.Read(ref _connectedUplinks);

    /// <summary>How many times an uplink was established.</summary>
    public int ConnectCount => Volatile.Read(ref _connects);

    /// <summary>Requests handed to the backend since start.</summary>
    public long RequestsRelayed => Interlocked.Read(ref _relayed);

    public string? LastDisconnectReason { get; private set; }

    private readonly Lock _publicUrlLock = new();

    /// <summary>Where callers reach the session, as the server last said; null before the first login (or from an older server).</summary>
    public string? PublicUrl { get; private set; }

    /// <returns>True when the URL is new (the first login, or the server's answer changed).</returns>
    internal bool OnPublicUrl(string url)
    {
        lock (_publicUrlLock)
        {
            if (url == PublicUrl)
            {
                return false;
            }

            PublicUrl = url;
            return true;
        }
    }

    /// <summary>The process exit code the client asks for (3 when the token was refused).</summary>
    public int ExitCode { get; internal set; }

    internal void OnConnected()
    {
        Interlocked.Increment(ref _connects);
        Interlocked.Increment(ref _connectedUplinks);
    }

    /// <summary>An uplink that was up has closed.</summary>
    internal void OnDisconnected(string reason)
    {
        LastDisconnectReason = reason;
        Interlocked.Decrement(ref _connectedUplinks);
    }

    /// <summary>A login that did not get an uplink up.</summary>
    internal void OnConnectFailed(string reason) => LastDisconnectReason = reason;

    internal void OnRequestRelayed() => Interlocked.Increment(ref _relayed);
}
