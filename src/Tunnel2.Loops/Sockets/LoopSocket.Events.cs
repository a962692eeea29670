using Tunnel2.Loops.Interop;

namespace Tunnel2.Loops.Sockets;

/// <summary>Readiness from the loop: a connect's end, the queue's drain, the owner's read.</summary>
public sealed partial class LoopSocket
{
    void ILoopHandler.OnReady(LoopReadiness ready)
    {
        if ((ready & LoopReadiness.Error) != 0 && !_connecting)
        {
            FailAndTell(SocketCalls.PendingError(Fd) is var errno and not 0 ? errno : LibC.EConnReset);
            return;
        }
        if ((ready & (LoopReadiness.Write | LoopReadiness.Error | LoopReadiness.HangUp)) != 0 && (_interest & LoopReadiness.Write) != 0)
        {
            if (!OnWriteReady())
            {
                return;
            }
        }
        if ((ready & (LoopReadiness.Read | LoopReadiness.HangUp)) != 0 && (_interest & LoopReadiness.Read) != 0 && !IsClosed)
        {
            _handler.OnReadable(this);
        }
        if ((ready & LoopReadiness.HangUp) != 0)
        {
            _hungUp = true;
        }
        UpdateInterest();
    }

    /// <returns>false when the socket closed.</returns>
    private bool OnWriteReady()
    {
        if (_connecting)
        {
            int errno = SocketCalls.PendingError(Fd);
            if (errno != 0 && !ResetAfterConnect(errno))
            {
                FailAndTell(errno);
                return false;
            }
            _connecting = false;
            _handler.OnConnected(this);
            if (IsClosed)
            {
                return false;
            }
            if (errno != 0)
            {
                FailAndTell(errno); // connected, then broken before the loop got to it
                return false;
            }
        }
        if (!Drain())
        {
            return false;
        }
        if (_queue.Count == 0 && _wantWritable && !IsClosed)
        {
            _wantWritable = false;
            _handler.OnWritable(this);
        }
        return !IsClosed;
    }

    /// <returns>false when a send failed (the owner has been told).</returns>
    private bool Drain()
    {
        while (_queue.Count > 0)
        {
            int sent = SocketCalls.Send(Fd, _queue.Head);
            if (sent == -LibC.EAgain)
            {
                return true;
            }
            if (sent < 0)
            {
                FailAndTell(-sent);
                return false;
            }
            _queue.Consume(sent);
        }
        ShutWhenDrained();
        return true;
    }

    private void ShutWhenDrained()
    {
        if (_shutdownRequested && !_writeShut && !_connecting && _queue.Count == 0 && !IsClosed)
        {
            LibC.shutdown(Fd, LibC.ShutWr);
            _writeShut = true;
        }
        if (_writeShut && _closeAfterShut)
        {
            Close();
        }
    }

    /// <summary>
    /// Whether a connect's pending error says it had connected: the kernel fails a refused handshake with
    /// ECONNREFUSED (a timed-out one with ETIMEDOUT), and only a connection that was established is reset
    /// (ECONNRESET, or EPIPE once the peer had ended). A peer that accepts and at once resets can do so before this
    /// loop sees the connect complete; that is a broken connection, not one that could not be made.
    /// </summary>
    private static bool ResetAfterConnect(int errno) => errno is LibC.EConnReset or LibC.EPipe;

    private void FailAndTell(int errno)
    {
        Fail(errno);
        _handler.OnClosed(this, LastError);
    }
}
