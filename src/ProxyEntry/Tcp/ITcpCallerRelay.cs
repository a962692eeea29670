using System.Net;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>One caller's relay as its port sees it, whichever engine runs it: it runs to its end, and the idle sweep may close it.</summary>
internal interface ITcpCallerRelay
{
    IPEndPoint? Caller { get; }

    uint StreamId { get; }

    /// <summary>Relays until both ways end; the end is logged and counted, and the stream disposed, before this completes.</summary>
    Task RunAsync();

    /// <summary>Sampled by the idle sweep (never concurrently): true once no byte moved either way for the timeout.</summary>
    bool IsIdle(long now, long timeoutMs);

    /// <summary>The idle sweep closes it: the stream is reset with IdleTimeout and the caller's connection cut.</summary>
    void CloseIdle();
}
