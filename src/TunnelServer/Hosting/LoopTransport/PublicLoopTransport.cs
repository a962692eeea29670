using System.Buffers;
using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>Builds the loop's transport from the server's services: its loop, Kestrel's limits and block pool, the uplinks' stream window.</summary>
public static class PublicLoopTransport
{
    /// <param name="listenSocket">A bound socket with the public listener's options (the socket transport's own recipe).</param>
    /// <param name="readBudgetPerTurn">TunnelServer:Public:LoopReadBudget; 0: none.</param>
    /// <param name="callerHandover">Whether upgraded callers are relayed on the loop (<c>TunnelServer:Public:UpgradeRelay</c> = <c>Loop</c>).</param>
    public static IConnectionListenerFactory Create(IServiceProvider services, Func<IPEndPoint, Socket> listenSocket, int readBudgetPerTurn, bool callerHandover)
    {
        ServerLoop loop = services.GetRequiredService<ServerLoop>();
        KestrelServerLimits limits = services.GetRequiredService<IOptions<KestrelServerOptions>>().Value.Limits;
        MemoryPool<byte> pool = services.GetService<IMemoryPoolFactory<byte>>() is { } factory
            ? factory.Create(new MemoryPoolOptions { Owner = "public-loop" })
            : MemoryPool<byte>.Shared;
        UplinkSettings uplink = services.GetService<UplinkSettings>() ?? new UplinkSettings();
        long streamWindow = Math.Max(uplink.InitialStreamWindow, uplink.MaxStreamWindow);
        return new LoopTransportFactory(() => loop.Start()?.Loop, listenSocket,
            LoopConnectionLimits.From(limits.MaxRequestBufferSize, limits.MaxResponseBufferSize, streamWindow), pool, readBudgetPerTurn, callerHandover);
    }
}
