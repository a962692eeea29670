using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// <c>TunnelServer:Public:StartOnLoop</c>: Kestrel starts every accepted connection in a thread-pool work item (its
/// connection dispatcher's, one per connection, first in first out). This connection middleware, the public listener's
/// first, moves the rest of that start to the loop at once: Kestrel's HTTP connection, the parse of its first request
/// head and ProxyEntry's routing and stream open then run in the loop's turn, not in the pool's queue behind every
/// other new connection's parse and first body copies (docs/benchmarks/2026-11-30-storm-first-second-loop.md).
/// </summary>
internal static class LoopConnectionStart
{
    public static void Use(ListenOptions listen) => listen.Use(Middleware);

    public static ConnectionDelegate Middleware(ConnectionDelegate next) => context =>
        context is LoopConnection connection && !connection.Loop.IsOnLoopThread ? StartOnLoopAsync(connection, next) : next(context);

    private static async Task StartOnLoopAsync(LoopConnection connection, ConnectionDelegate next)
    {
        await new LoopHop(connection.Loop);
        await next(connection);
    }
}
