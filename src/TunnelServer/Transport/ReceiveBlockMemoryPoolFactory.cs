using System.Buffers;
using Microsoft.AspNetCore.Connections;

namespace Tunnel2.TunnelServer.Transport;

/// <summary>Hands Kestrel's socket transport <see cref="ReceiveBlockMemoryPool"/>s instead of its 4 KiB-block pools.</summary>
internal sealed class ReceiveBlockMemoryPoolFactory : IMemoryPoolFactory<byte>
{
    public MemoryPool<byte> Create(MemoryPoolOptions? options = null) => new ReceiveBlockMemoryPool();
}
