using System.Net.Sockets;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Buffers;

namespace Tunnel2.TunnelClient.Relay.OnLoop;

/// <summary>
/// Writes: straight to the kernel from the writer's thread (a request head, a small body: one send, no hand-off). What
/// the kernel refuses is copied into a buffer of the frames' pool (<see cref="DataBufferPool"/>: a body pumped into a
/// slow backend has a part of nearly every write refused) and handed to the loop, which sends it as the socket drains,
/// gives the buffer back and then completes the write off the loop; the writer (one at a time, a pipe's flush) waits
/// for that, so bytes never pass one another.
/// </summary>
internal sealed partial class LoopSocketStream
{
    private byte[]? _unsent;
    private int _unsentOffset;
    private int _unsentLength;
    private TaskCompletionSource? _write;

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        int sent = 0;
        while (sent < buffer.Length)
        {
            int n;
            SocketError error;
            try
            {
                n = _socket.Send(buffer.Span[sent..], SocketFlags.None, out error);
            }
            catch (ObjectDisposedException)
            {
                return ValueTask.FromException(new IOException("the backend connection was closed"));
            }

            if (error == SocketError.WouldBlock)
            {
                break;
            }

            if (error != SocketError.Success)
            {
                return ValueTask.FromException(new IOException("the backend connection failed", new SocketException((int)error)));
            }

            sent += n;
        }

        return sent == buffer.Length ? ValueTask.CompletedTask : new ValueTask(SendRestOnLoop(buffer[sent..]));
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public void OnWritable(LoopSocket socket) => SendUnsent(socket);

    private Task SendRestOnLoop(ReadOnlyMemory<byte> rest)
    {
        var write = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        byte[] unsent = DataBufferPool.Shared.Rent(rest.Length); // the kernel's buffer was full
        rest.CopyTo(unsent);
        _unsent = unsent;
        _unsentOffset = 0;
        _unsentLength = rest.Length;
        _write = write;
        if (!_loop.Post(static state => ((LoopSocketStream)state!).StartSendingUnsent(), this))
        {
            FailPendingWrite(new IOException("the client's event loop has stopped"));
        }

        return write.Task;
    }

    private void StartSendingUnsent()
    {
        if (_closed || _loopSocket is not { IsClosed: false } socket)
        {
            FailPendingWrite(new IOException("the backend connection was closed"));
            return;
        }

        SendUnsent(socket);
    }

    private void SendUnsent(LoopSocket socket)
    {
        if (_unsent is not { } unsent)
        {
            return;
        }

        int n = socket.SendSome(unsent.AsSpan(_unsentOffset, _unsentLength - _unsentOffset));
        if (n < 0)
        {
            FailPendingWrite(new IOException($"the backend connection failed ({socket.LastError.Kind})"));
            return;
        }

        _unsentOffset += n;
        if (_unsentOffset == _unsentLength)
        {
            ReturnUnsent();
            Interlocked.Exchange(ref _write, null)?.TrySetResult();
        }
    }

    private void FailPendingWrite(Exception failure)
    {
        ReturnUnsent();
        Interlocked.Exchange(ref _write, null)?.TrySetException(failure);
    }

    /// <summary>On the loop (or once it has stopped): the one that ends the pending write gives its buffer back.</summary>
    private void ReturnUnsent()
    {
        if (Interlocked.Exchange(ref _unsent, null) is { } unsent)
        {
            DataBufferPool.Shared.Return(unsent);
        }
    }
}
