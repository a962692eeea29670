namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// A body destination that tells when the bytes flushed to it have left the process: the server's public connection on
/// its event loop, whose output limit sits above a stream's window. The HTTP body path then gives a payload's credit
/// back once its bytes are sent rather than once its flush returned, so the flush completes at once (no hand-off to the
/// copy loop) and a caller that reads slowly still holds no more than its stream's window here.
/// Called from any thread.
/// </summary>
public interface ISendProgress
{
    /// <summary>Every byte flushed to the destination so far: all of them have left once the sent count reaches this.</summary>
    long Flushed { get; }

    /// <summary>
    /// Asks for <see cref="ISendProgressListener.OnSent"/> once <paramref name="mark"/> bytes have been sent, replacing an
    /// earlier request. The call comes on the destination's own thread, never inside this method.
    /// </summary>
    /// <returns>False when that many have been sent already: no call will come for this request.</returns>
    bool NotifyWhenSent(long mark, ISendProgressListener listener);

    /// <summary>Drops <paramref name="listener"/>'s request, if it is the one waiting (its body has ended).</summary>
    void Forget(ISendProgressListener listener);
}
