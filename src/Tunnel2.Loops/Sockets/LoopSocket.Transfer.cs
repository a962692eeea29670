using Tunnel2.Loops.Interop;

namespace Tunnel2.Loops.Sockets;

/// <summary>Reads and sends, each one syscall at most, errors as values.</summary>
public sealed partial class LoopSocket
{
    public ReceiveResult Receive(Span<byte> into)
    {
        if (IsClosed)
        {
            return new ReceiveResult(ReceiveStatus.Closed, 0, LastError);
        }
        return ReceivedResult(SocketCalls.Receive(Fd, into));
    }

    /// <summary>What a read's return (bytes, 0 at the peer's end, or -errno) means for the owner; a failure closes the socket.</summary>
    private ReceiveResult ReceivedResult(int n)
    {
        if (n > 0)
        {
            return new ReceiveResult(ReceiveStatus.Data, n, LoopError.None);
        }
        if (n == 0)
        {
            _endOfStream = true;
            UpdateInterest();
            return new ReceiveResult(ReceiveStatus.EndOfStream, 0, LoopError.None);
        }
        if (n == -LibC.EAgain)
        {
            return new ReceiveResult(ReceiveStatus.WouldBlock, 0, LoopError.None);
        }
        Fail(-n);
        return new ReceiveResult(ReceiveStatus.Failed, 0, LastError);
    }

    /// <summary>Reads into the loop's pooled buffer: <paramref name="data"/> is valid until the next read on this loop.</summary>
    public ReceiveResult Receive(out ReadOnlySpan<byte> data)
    {
        byte[] buffer = _loop.ReceiveBuffer;
        ReceiveResult result = Receive(buffer);
        data = buffer.AsSpan(0, result.Bytes);
        return result;
    }

    /// <summary>
    /// Reads into the loop's pooled buffer, as memory (for a parser over a sequence): <paramref name="data"/> is valid
    /// until the next read on this loop, so an owner that holds no buffer of its own while idle copies only what it keeps.
    /// </summary>
    public ReceiveResult ReceiveShared(out ReadOnlyMemory<byte> data)
    {
        byte[] buffer = _loop.ReceiveBuffer;
        ReceiveResult result = Receive(buffer);
        data = buffer.AsMemory(0, result.Bytes);
        return result;
    }

    /// <summary>Sends <paramref name="data"/>; what the kernel cannot take now is queued (copied), up to the window.</summary>
    public SendStatus Send(ReadOnlySpan<byte> data) => Send(data, default);

    /// <summary>A gather send: <paramref name="header"/> and <paramref name="payload"/> in one sendmsg, no copy to join them.</summary>
    public SendStatus Send(ReadOnlySpan<byte> header, ReadOnlySpan<byte> payload)
    {
        if (IsClosed || _shutdownRequested)
        {
            return SendStatus.Closed;
        }
        int sent = 0;
        if (_queue.Count == 0 && !_connecting)
        {
            sent = payload.IsEmpty ? SocketCalls.Send(Fd, header) : SocketCalls.Send(Fd, header, payload);
            if (sent == -LibC.EAgain)
            {
                sent = 0;
            }
            else if (sent < 0)
            {
                Fail(-sent);
                return SendStatus.Closed;
            }
            if (sent == header.Length + payload.Length)
            {
                return SendStatus.Sent;
            }
        }
        else if (_queue.Count >= Window)
        {
            _wantWritable = true;
            return SendStatus.Refused;
        }
        return QueueRest(header, payload, sent);
    }

    /// <summary>Sends what the kernel takes now and queues nothing: for an owner that keeps its own buffer. When not
    /// all was taken, OnWritable follows once the socket can take more.</summary>
    /// <returns>Bytes taken (0 to all), or -1 when the socket has failed and is closed (<see cref="LastError"/>).</returns>
    public int SendSome(ReadOnlySpan<byte> data)
    {
        if (IsClosed || _shutdownRequested)
        {
            return -1;
        }
        int sent = 0;
        if (_queue.Count == 0 && !_connecting)
        {
            sent = SocketCalls.Send(Fd, data);
            if (sent == -LibC.EAgain)
            {
                sent = 0;
            }
            else if (sent < 0)
            {
                Fail(-sent);
                return -1;
            }
        }
        if (sent < data.Length && !_wantWritable)
        {
            _wantWritable = true;
            UpdateInterest();
        }
        return sent;
    }

    /// <summary>Asks for OnWritable once the queue has drained (at once, on the loop's next turn, if it is empty): for an
    /// owner that counts what reached the kernel, e.g. to return a peer's credit.</summary>
    public void NotifyWhenDrained()
    {
        if (!IsClosed && !_wantWritable)
        {
            _wantWritable = true;
            UpdateInterest();
        }
    }

    private SendStatus QueueRest(ReadOnlySpan<byte> header, ReadOnlySpan<byte> payload, int sent)
    {
        if (sent < header.Length)
        {
            _queue.Append(header[sent..]);
            _queue.Append(payload);
        }
        else
        {
            _queue.Append(payload[(sent - header.Length)..]);
        }
        UpdateInterest();
        if (_queue.Count < Window)
        {
            return SendStatus.Queued;
        }
        _wantWritable = true;
        return SendStatus.Full;
    }
}
