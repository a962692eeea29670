using System.Buffers;
using System.Net;
using Microsoft.AspNetCore.Connections;
using Tunnel2.Loops;

namespace Tunnel2.LoopKestrel.Transport;

/// <summary>
/// Kestrel's connection transport on one <see cref="EventLoop"/> (nginx's one worker): registered as the
/// <see cref="IConnectionListenerFactory"/>, it replaces the socket transport.
/// </summary>
internal sealed class LoopTransportFactory : IConnectionListenerFactory, IDisposable
{
    private readonly EventLoop _loop = new("kestrel-loop");
    private readonly LoopScheduler _scheduler;
    private readonly MemoryPool<byte> _pool;

    public LoopTransportFactory(IServiceProvider services)
    {
        _scheduler = new LoopScheduler(_loop);
        // Kestrel's pinned block pool where the host offers its factory (it does from .NET 10), else the shared one.
        _pool = services.GetService(typeof(IMemoryPoolFactory<byte>)) is IMemoryPoolFactory<byte> factory
            ? factory.Create(new MemoryPoolOptions { Owner = "loop-transport" })
            : MemoryPool<byte>.Shared;
    }

    public async ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken cancellationToken = default)
    {
        if (endpoint is not IPEndPoint at)
        {
            throw new NotSupportedException($"The loop transport listens on IP end points only, not {endpoint}.");
        }
        return await LoopConnectionListener.StartAsync(_scheduler, _pool, at).ConfigureAwait(false);
    }

    public void Dispose()
    {
        _loop.Dispose();
        _pool.Dispose();
    }
}
