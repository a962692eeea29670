using Tunnel2.Loops;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The writer on the loop: at the end of a turn in which frames were queued (a wake from another thread is one post),
/// it takes them in the scheduler's order. Small frames are gathered in one batch buffer; a frame with a pooled payload
/// goes out as the batch, its header and the payload in one gather send, without copying the payload. What the kernel
/// refuses waits in the socket's queue, bounded by its window; at the window, the writer stops until OnWritable, and
/// the scheduler's data budget holds back the streams' producers meanwhile.
/// </summary>
internal sealed partial class LoopUplinkTransport : ILoopTurnEnd, IUplinkWriter
{
    /// <summary>A pooled payload this large goes out by reference in a gather send; smaller ones are copied into the batch.</summary>
    private const int GatherPayloadBytes = 512;

    private readonly FrameBatch _batch = new();
    private long _lastSentTicks = Environment.TickCount64;
    private int _wakePosted;
    private bool _turnEndAsked;
    private bool _waitingWritable;
    private bool _writeDone;

    public long LastSentTicks => Volatile.Read(ref _lastSentTicks);

    /// <summary>The writer is woken by every frame queued: on the loop it needs no hand-off at all.</summary>
    public void SendNowOrWake() => Wake();

    /// <summary>Nothing waits here: the close's wake makes the writer give up on a peer that does not read.</summary>
    public void CancelPendingFlush()
    {
    }

    /// <summary>From any thread, as the scheduler's wake: asks for a write at the end of the loop's turn.</summary>
    private void Wake()
    {
        if (_loop.IsOnLoopThread)
        {
            AskTurnEnd();
            return;
        }

        if (Interlocked.Exchange(ref _wakePosted, 1) == 0)
        {
            _loop.Post(static state => ((LoopUplinkTransport)state!).OnWakePosted(), this);
        }
    }

    private void OnWakePosted()
    {
        Volatile.Write(ref _wakePosted, 0); // before the write: a frame queued from now on posts again
        AskTurnEnd();
    }

    private void AskTurnEnd()
    {
        if (!_turnEndAsked)
        {
            _turnEndAsked = true;
            _loop.DeferToTurnEnd(this);
        }
    }

    void ILoopTurnEnd.OnTurnEnd()
    {
        _turnEndAsked = false;
        Write();
    }

    void ILoopSocketHandler.OnWritable(LoopSocket socket)
    {
        _waitingWritable = false;
        Write();
    }

    private void Write()
    {
        if (_socket is null)
        {
            return; // not adopted yet: Begin writes what is queued
        }

        // Read before taking frames: once completion is seen, every frame queued before it is visible too.
        bool completed = _scheduler.IsCompleted;
        if (_writeDone)
        {
            if (completed)
            {
                _scheduler.DropQueued();
            }

            return;
        }

        if (!_waitingWritable)
        {
            WriteQueued();
        }

        if (completed && !_writeDone)
        {
            FinishWriting();
        }
    }

    private void WriteQueued()
    {
        int frames = 0;
        long bytes = 0;
        if (_batch.Length > 0 && !Flush())
        {
            return;
        }

        while (!_waitingWritable && !_writeDone && _scheduler.TryDequeue(out OutboundFrame frame))
        {
            frames++;
            bytes += frame.TotalLength;
            if (frame.HasPooledPayloadOf(GatherPayloadBytes))
            {
                frame.WriteHeaderTo(_batch);
                SendStatus status = _socket!.Send(_batch.Written, frame.PooledPayload.Span);
                _batch.Clear();
                frame.ReturnBuffer();
                OnSent(status);
                continue;
            }

            if (_batch.Room < frame.TotalLength && !Flush())
            {
                if (_writeDone)
                {
                    frame.ReturnBuffer();
                }
                else
                {
                    frame.WriteTo(_batch); // the batch is empty now: it goes first once the socket drains
                }

                break;
            }

            frame.WriteTo(_batch);
        }

        if (_batch.Length > 0 && !_waitingWritable && !_writeDone)
        {
            Flush();
        }

        if (frames > 0)
        {
            UplinkMetrics.Sent(frames, bytes);
            Volatile.Write(ref _lastSentTicks, Environment.TickCount64);
        }

        if (_batch.Length == 0)
        {
            _batch.Release(); // an idle uplink (a keep-alive Pong now and then) holds no 64 KiB batch between turns
        }
    }

    /// <returns>False when the writer must stop: the socket is at its window, or failed.</returns>
    private bool Flush()
    {
        SendStatus status = _socket!.Send(_batch.Written);
        _batch.Clear();
        OnSent(status);
        return !_waitingWritable && !_writeDone;
    }

    private void OnSent(SendStatus status)
    {
        switch (status)
        {
            case SendStatus.Full:
            case SendStatus.Refused: // never, as the writer stops at Full; kept safe all the same
                _waitingWritable = true;
                break;
            case SendStatus.Closed:
                // The send failed and the socket closed itself (no OnClosed follows a failure a call reports).
                EndRead(new LoopReadEnd($"transport error while writing: {Describe(_socket!.LastError)}", null));
                _writeDone = true;
                Release();
                break;
        }
    }

    /// <summary>The uplink closed: what is queued goes (bounded in time), then a FIN, then the socket closes.</summary>
    private void FinishWriting()
    {
        _writeDone = true;
        EndRead(new LoopReadEnd("closed locally", null));
        _scheduler.DropQueued();
        LoopSocket socket = _socket!;
        socket.CloseAfterDrain();
        if (socket.IsClosed)
        {
            Release();
            return;
        }

        _loop.Schedule(FinalFlushTimeout, static state => ((LoopUplinkTransport)state!).CloseNow(), this);
    }

    private void CloseNow()
    {
        _socket!.Close();
        Release();
    }
}
