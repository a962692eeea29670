namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The HTTP body path into a destination that reports its sends (<see cref="ISendProgress"/>, the server's public
/// connection on its loop): a payload flushed into it, by the reader or the copy loop, has its credit given back when
/// the destination has sent it, not when the flush returned. The destination's output limit sits a window above its own
/// so those flushes complete at once (the reader keeps writing, no pool hand-off), and what a slow caller holds here is
/// still bounded by the stream's window.
/// </summary>
internal sealed partial class UplinkStream : ISendProgressListener
{
    // All under _sync. The body destination's progress while the body is copied into it; the bytes flushed there whose
    // credit has not gone back; the destination's flushed count once the last of them was flushed.
    private ISendProgress? _bodySent;
    private long _sentOwed;
    private long _sentMark;

    /// <summary>Under the lock: <paramref name="bytes"/> reached the destination in a flush that has completed (the
    /// reader's, at once, or the copy loop's).</summary>
    /// <returns>The bytes whose credit goes back now (all of them, without a progress to wait for).</returns>
    private long CreditWhenSent(long bytes)
    {
        if (_bodySent is not { } progress)
        {
            return bytes;
        }

        long mark = progress.Flushed;
        if (progress.NotifyWhenSent(mark, this))
        {
            _sentOwed += bytes;
            _sentMark = mark;
            return 0;
        }

        long sent = _sentOwed + bytes;
        _sentOwed = 0;
        return sent;
    }

    /// <summary>The copy loop: <paramref name="bytes"/> reached the destination in a flush that has completed.</summary>
    /// <returns>The bytes whose credit goes back now.</returns>
    private long CreditOnceSent(long bytes)
    {
        lock (_sync)
        {
            return CreditWhenSent(bytes);
        }
    }

    /// <summary>On the destination's thread: what was flushed up to the last mark has left, so its credit goes back.</summary>
    void ISendProgressListener.OnSent(ISendProgress source, long sent)
    {
        long owed;
        lock (_sync)
        {
            // Another body's destination, or an earlier request that a later flush moved on from.
            if (!ReferenceEquals(source, _bodySent) || sent < _sentMark)
            {
                return;
            }

            owed = _sentOwed;
            _sentOwed = 0;
        }

        OnInputConsumed(owed);
    }

    /// <summary>Under the lock: the body's copy ends. What is owed is dropped: the peer's side is over, or the stream goes.</summary>
    private void StopCreditWhenSent()
    {
        _bodySent?.Forget(this);
        _bodySent = null;
        _sentOwed = 0;
        _sentMark = 0;
    }
}
