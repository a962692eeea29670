using System.Net;
using System.Net.Sockets;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Relay.Http1;

/// <summary>A zero-byte read waits for the socket's bytes only while the pool is crowded; otherwise it returns at once.</summary>
public sealed class CrowdAwareReadStreamTests : IAsyncLifetime
{
    private Socket _client = null!;
    private Socket _server = null!;

    public async ValueTask InitializeAsync()
    {
        using var listener = new Socket(SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        _client = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await _client.ConnectAsync(listener.LocalEndPoint!);
        _server = await listener.AcceptAsync();
    }

    public ValueTask DisposeAsync()
    {
        _client.Dispose();
        _server.Dispose();
        return ValueTask.CompletedTask;
    }

    [Fact]
    public async Task Not_crowded_an_empty_read_returns_at_once_though_the_socket_has_nothing()
    {
        using var stream = new CrowdAwareReadStream(new NetworkStream(_client), static () => false);

        ValueTask<int> read = stream.ReadAsync(Memory<byte>.Empty);

        Assert.True(read.IsCompletedSuccessfully);
        Assert.Equal(0, await read);
    }

    [Fact]
    public async Task Crowded_an_empty_read_waits_for_the_bytes_and_leaves_them_for_the_next_read()
    {
        using var stream = new CrowdAwareReadStream(new NetworkStream(_client), static () => true);

        Task<int> wait = stream.ReadAsync(Memory<byte>.Empty).AsTask();
        Assert.False(wait.IsCompleted);

        await _server.SendAsync("ab"u8.ToArray());
        Assert.Equal(0, await wait.WithTimeout());

        byte[] buffer = new byte[8];
        int read = await stream.ReadAsync(buffer.AsMemory());
        Assert.Equal("ab", System.Text.Encoding.ASCII.GetString(buffer, 0, read));
    }
}
