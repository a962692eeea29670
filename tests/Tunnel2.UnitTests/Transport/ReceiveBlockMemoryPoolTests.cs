using System.Buffers;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Tunnel2.TunnelServer;
using Tunnel2.TunnelServer.Transport;

namespace Tunnel2.UnitTests.Transport;

/// <summary>The server's Kestrel pool: 32 KiB blocks, reused, with a bounded number kept.</summary>
public sealed class ReceiveBlockMemoryPoolTests
{
    [Fact]
    public void Every_block_is_the_full_block_size_whatever_was_asked()
    {
        using var pool = new ReceiveBlockMemoryPool();

        using IMemoryOwner<byte> small = pool.Rent(1);
        using IMemoryOwner<byte> any = pool.Rent();

        Assert.Equal(ReceiveBlockMemoryPool.BlockSize, pool.MaxBufferSize);
        Assert.Equal(ReceiveBlockMemoryPool.BlockSize, small.Memory.Length);
        Assert.Equal(ReceiveBlockMemoryPool.BlockSize, any.Memory.Length);
        Assert.Throws<ArgumentOutOfRangeException>(() => pool.Rent(ReceiveBlockMemoryPool.BlockSize + 1));
    }

    [Fact]
    public void A_returned_block_is_handed_out_again_and_a_second_dispose_does_not_return_it_twice()
    {
        using var pool = new ReceiveBlockMemoryPool();
        IMemoryOwner<byte> first = pool.Rent();
        Memory<byte> memory = first.Memory;

        first.Dispose();
        first.Dispose();
        IMemoryOwner<byte> again = pool.Rent();
        IMemoryOwner<byte> other = pool.Rent();

        Assert.True(again.Memory.Span == memory.Span, "the returned block was not reused");
        Assert.False(other.Memory.Span == memory.Span, "one block was handed out twice");
    }

    [Fact]
    public void Beyond_the_retention_limit_returned_blocks_are_left_to_the_GC()
    {
        using var pool = new ReceiveBlockMemoryPool();
        var rented = new List<IMemoryOwner<byte>>();
        for (int i = 0; i < ReceiveBlockMemoryPool.MaxRetainedBlocks + 10; i++)
        {
            rented.Add(pool.Rent());
        }

        foreach (IMemoryOwner<byte> block in rented)
        {
            block.Dispose();
        }

        var reused = new HashSet<byte[]>(ReferenceEqualityComparer.Instance);
        var again = new List<IMemoryOwner<byte>>();
        for (int i = 0; i < ReceiveBlockMemoryPool.MaxRetainedBlocks + 10; i++)
        {
            again.Add(pool.Rent());
        }

        var original = new HashSet<byte[]>(ReferenceEqualityComparer.Instance);
        foreach (IMemoryOwner<byte> block in rented)
        {
            original.Add(ArrayOf(block));
        }

        foreach (IMemoryOwner<byte> block in again)
        {
            if (original.Contains(ArrayOf(block)))
            {
                reused.Add(ArrayOf(block));
            }
        }

        Assert.Equal(ReceiveBlockMemoryPool.MaxRetainedBlocks, reused.Count);
    }

    [Fact]
    public void The_server_gives_Kestrels_socket_transport_this_pool()
    {
        using WebApplication app = TunnelServerApp.Create(["--TunnelServer:Token=12345678", "--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0"]);

        Assert.IsType<ReceiveBlockMemoryPoolFactory>(app.Services.GetRequiredService<IMemoryPoolFactory<byte>>());
        // Kestrel copies the factory from DI into an internal option of its socket transport; read it back so a
        // Kestrel that stops doing so fails here rather than silently going back to 4 KiB receives.
        SocketTransportOptions transport = app.Services.GetRequiredService<IOptions<SocketTransportOptions>>().Value;
        object? used = typeof(SocketTransportOptions)
            .GetProperty("MemoryPoolFactory", System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic)?
            .GetValue(transport);
        Assert.IsType<ReceiveBlockMemoryPoolFactory>(used);
    }

    private static byte[] ArrayOf(IMemoryOwner<byte> block) =>
        System.Runtime.InteropServices.MemoryMarshal.TryGetArray<byte>(block.Memory, out ArraySegment<byte> segment) ? segment.Array! : throw new InvalidOperationException("not array-backed");
}
