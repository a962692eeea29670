using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// How far the response has gone out (<see cref="ISendProgress"/>, a connection feature): ProxyEntry gives a tunnel
/// body's credit back once its bytes have been sent, so Kestrel's flushes into this connection complete at once (its
/// output limit sits a stream window above Kestrel's own, <see cref="LoopConnectionLimits"/>) and stay on the loop,
/// while a caller that reads slowly still holds no more than its stream's window. Kestrel's writes are counted by the
/// output's writer, the sends by the drain; one request waits at a time (one response at a time on HTTP/1.1).
/// </summary>
internal sealed partial class LoopConnection : ISendProgress
{
    private readonly Lock _sentLock = new();
    private long _sent;
    private long _notifyMark;
    private ISendProgressListener? _notify;
    private bool _sendsEnded;

    public long Flushed => _counted.Written;

    public bool NotifyWhenSent(long mark, ISendProgressListener listener)
    {
        lock (_sentLock)
        {
            if (_sent >= mark || _sendsEnded)
            {
                return false;
            }

            _notifyMark = mark;
            _notify = listener;
            return true;
        }
    }

    public void Forget(ISendProgressListener listener)
    {
        lock (_sentLock)
        {
            if (ReferenceEquals(_notify, listener))
            {
                _notify = null;
            }
        }
    }

    /// <summary>On the loop, after a send took <paramref name="bytes"/>: the waiting request is told, outside the lock
    /// (the listener takes its own lock, which it holds while it asks).</summary>
    private void Sent(int bytes)
    {
        ISendProgressListener? listener;
        long sent;
        lock (_sentLock)
        {
            _sent += bytes;
            sent = _sent;
            listener = _notify;
            if (listener is null || sent < _notifyMark)
            {
                return;
            }

            _notify = null;
        }

        listener.OnSent(this, sent);
    }

    /// <summary>On the loop: the output is over; nothing more will be sent, so nobody is told again.</summary>
    private void EndSends()
    {
        lock (_sentLock)
        {
            _sendsEnded = true;
            _notify = null;
        }
    }
}
