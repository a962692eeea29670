using System.IO.Pipelines;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// A byte stream's ends for an owner on an event loop, which can neither wait on tasks nor read a pipe (issue 52, stage
/// 2): the peer's bytes straight from the reader's buffer to a sink, credit taken without waiting and a listener told
/// when more comes, and pooled buffers handed to the writer as Data frames.
/// </summary>
public sealed partial class UplinkStream
{
    private IStreamInboundSink? _sink;

    /// <summary>
    /// From now on the peer's bytes go to <paramref name="sink"/>, not to the inbound pipe. Set it in
    /// <see cref="IUplinkStreamHandler.OnStreamOpened"/> (on the reader's thread, before any Data frame of the stream).
    /// </summary>
    public void AttachInboundSink(IStreamInboundSink sink) => Volatile.Write(ref _sink, sink);

    /// <summary>
    /// As <see cref="AttachInboundSink"/>, for an owner that waited on the inbound pipe first (the server's TCP door waits
    /// for the target's first answer before it relays): what the pipe holds goes to <paramref name="sink"/> first, then
    /// the peer's END_STREAM if it came already. Under the stream's lock, so the reader's next frame cannot overtake it.
    /// </summary>
    public void TakeOverInbound(IStreamInboundSink sink)
    {
        bool ended;
        lock (_sync)
        {
            Volatile.Write(ref _sink, sink);
            ended = (_state & (StreamState.RemoteEnded | StreamState.Aborted)) == StreamState.RemoteEnded;
            if ((_state & (StreamState.Aborted | StreamState.Disposed)) == 0)
            {
                HandOverPiped(sink);
            }
        }

        if (ended)
        {
            sink.OnInboundEnd();
        }
    }

    /// <summary>Under the lock: the bytes the pipe holds, to the sink (which reports what it took, as for a frame).</summary>
    private void HandOverPiped(IStreamInboundSink sink)
    {
        PipeReader input = _inbound.Reader;
        ReadResult piped;
        try
        {
            if (!input.TryRead(out piped))
            {
                return;
            }
        }
        catch (Exception ex) when (ex is StreamResetException or UplinkClosedException or InvalidOperationException)
        {
            return; // failed meanwhile: the abort listener ends the owner
        }

        if (!piped.Buffer.IsEmpty)
        {
            sink.OnInboundData(piped.Buffer);
        }

        input.AdvanceTo(piped.Buffer.End);
    }

    /// <summary>The sink's destination took <paramref name="bytes"/> of the peer's bytes: the peer's credit comes back.</summary>
    public void ReportInboundConsumed(int bytes) => OnInputConsumed(bytes);

    /// <summary>Takes up to <paramref name="max"/> bytes of send credit without waiting; 0 when there is none.</summary>
    public int TryTakeSendCredit(int max) => _sendWindow.TryAcquire(max);

    /// <summary>Tells <paramref name="listener"/> once when send credit is there again (at once if it is), or the stream failed.</summary>
    public void NotifyOnSendCredit(ISendCreditListener listener) => _sendWindow.NotifyOnCredit(listener);

    /// <summary>Gives back credit taken with <see cref="TryTakeSendCredit"/> and not sent.</summary>
    public void ReturnUnusedSendCredit(int unused) => ReturnSendCredit(unused);

    /// <summary>
    /// Sends <paramref name="length"/> bytes of <paramref name="pooled"/> (rented from the shared pool; the stream owns it
    /// now) as one Data frame, under credit taken with <see cref="TryTakeSendCredit"/>. Queues it for the writer; never
    /// writes on this thread.
    /// </summary>
    /// <exception cref="StreamResetException">The stream was reset meanwhile.</exception>
    /// <exception cref="UplinkClosedException">The uplink no longer sends.</exception>
    public void SendPooled(byte[] pooled, int length) => SendPooledData(pooled, length, endStream: false);
}
