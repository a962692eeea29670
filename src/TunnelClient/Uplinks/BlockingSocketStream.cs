using System.Net.Sockets;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>
/// Reads a socket with its blocking call, even through ReadAsync (which then completes at once): for a handshake on a
/// thread-pool thread that must keep the socket out of the runtime's epoll set, as an async read would put it there.
/// </summary>
internal sealed class BlockingSocketStream(Socket socket) : Stream
{
    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => false;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override int Read(byte[] buffer, int offset, int count) => socket.Receive(buffer, offset, count, SocketFlags.None);

    public override int Read(Span<byte> buffer) => socket.Receive(buffer, SocketFlags.None);

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return ValueTask.FromResult(socket.Receive(buffer.Span, SocketFlags.None));
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}
