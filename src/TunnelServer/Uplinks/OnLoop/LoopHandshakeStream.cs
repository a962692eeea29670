using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.TunnelServer.Uplinks.OnLoop;

/// <summary>
/// A plain login's socket while its head is read and answered (<c>TunnelServer:Uplink:Engine</c> = <c>Loop</c>): each
/// read and write is one non-blocking call, and when the kernel has nothing (or no room) the wait is the server's loop
/// (<see cref="SocketReadiness"/>), never an async call on the runtime's sockets. So the socket never joins the
/// runtime's epoll set, whose thread would otherwise wake for every segment once the loop runs the uplink, and a login
/// that sends nothing holds no thread and no buffer: a registration in the loop's set, until its data or its timeout.
/// </summary>
internal sealed class LoopHandshakeStream : Stream
{
    private readonly EventLoop _loop;
    private readonly Socket _socket;

    public LoopHandshakeStream(EventLoop loop, Socket socket)
    {
        _loop = loop;
        _socket = socket;
        socket.Blocking = false;
    }

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    /// <summary>A zero-byte read waits until the socket is readable (the pipe's way to hold no buffer meanwhile).</summary>
    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        while (true)
        {
            if (buffer.IsEmpty)
            {
                if (_socket.Available > 0)
                {
                    return 0;
                }
            }
            else
            {
                int read = _socket.Receive(buffer.Span, SocketFlags.None, out SocketError error);
                if (error == SocketError.Success)
                {
                    return read;
                }

                ThrowUnlessWouldBlock(error);
            }

            await WaitAsync(LoopReadiness.Read, cancellationToken).ConfigureAwait(false);
            if (buffer.IsEmpty)
            {
                return 0; // readable: bytes, the end or an error, which the next read says
            }
        }
    }

    /// <summary>What the kernel cannot take now (a 101 is small: it takes all of it at once) waits for room on the loop.</summary>
    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        while (!buffer.IsEmpty)
        {
            int sent = _socket.Send(buffer.Span, SocketFlags.None, out SocketError error);
            if (error == SocketError.Success)
            {
                buffer = buffer[sent..];
                continue;
            }

            ThrowUnlessWouldBlock(error);
            await WaitAsync(LoopReadiness.Write, cancellationToken).ConfigureAwait(false);
        }
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override void Flush()
    {
    }

    /// <summary>Never used: the handshake's pipes read and write asynchronously, and a blocking call would hold a thread.</summary>
    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    private Task WaitAsync(LoopReadiness interest, CancellationToken cancellationToken) =>
        SocketReadiness.TryWait(_loop, _socket, cancellationToken, interest)
        ?? throw new IOException("The server's event loop has stopped.");

    private static void ThrowUnlessWouldBlock(SocketError error)
    {
        if (error is not (SocketError.WouldBlock or SocketError.Interrupted))
        {
            throw new IOException($"Unable to transfer data on the transport connection: {error}.", new SocketException((int)error));
        }
    }
}
