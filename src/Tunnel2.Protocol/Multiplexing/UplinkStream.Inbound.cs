using System.Buffers;
using System.IO.Pipelines;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>What the uplink's reader loop delivers to a stream.</summary>
public sealed partial class UplinkStream
{
    /// <summary>
    /// Takes the client's response head (server side). It is not handed to the owner here but by
    /// <see cref="DeliverResponseHead"/> once the reader has dispatched the whole batch of frames it came in, so that a
    /// small answer whose body came in the same batch is complete when the owner sees it.
    /// </summary>
    /// <returns>True when the head is to be delivered; false when the stream was reset before it came.</returns>
    internal bool OnResponseHead(ResponseHead head, bool endStream)
    {
        if (_responseHead is null)
        {
            throw new ProtocolViolationException($"Response head on stream {Id}, which this side opened as a client.");
        }

        lock (_sync)
        {
            if ((_state & StreamState.Aborted) != 0)
            {
                return false; // in flight when this side reset the stream (the head came too late, or the caller left)
            }

            if (_arrivedHead is not null)
            {
                throw new ProtocolViolationException($"Second response head on stream {Id}.");
            }

            _arrivedHead = head;
        }

        if (endStream)
        {
            EndInbound();
        }

        return true;
    }

    /// <exception cref="ProtocolViolationException">Data after the end of the stream, or beyond the window.</exception>
    internal void OnData(in ReadOnlySequence<byte> payload, bool endStream)
    {
        IStreamInboundSink? sink = null;
        lock (_sync)
        {
            if ((_state & StreamState.RemoteEnded) != 0)
            {
                if ((_state & StreamState.Aborted) != 0)
                {
                    return; // in flight when we reset it
                }

                throw new ProtocolViolationException($"Data after the end of stream {Id}.");
            }

            if (_responseHead is not null && _arrivedHead is null)
            {
                throw new ProtocolViolationException($"Data before the response head on stream {Id}.");
            }

            _receiveWindow -= payload.Length;
            if (_receiveWindow < 0)
            {
                throw new ProtocolViolationException($"Stream {Id} sent beyond its flow-control window.");
            }

            _uplink.AddReceiveCredit(-payload.Length);
            Volatile.Write(ref _receivedBytes, _receivedBytes + payload.Length);
            if ((_state & StreamState.Disposed) == 0 && !payload.IsEmpty)
            {
                _unconsumed += payload.Length;
                sink = _sink;
            }

            if (sink is null && (_state & StreamState.Disposed) == 0 && !payload.IsEmpty)
            {
                foreach (ReadOnlyMemory<byte> segment in payload)
                {
                    _inbound.Writer.Write(segment.Span);
                }

                // Never pauses (pauseWriterThreshold is 0), so the flush completes synchronously.
                ValueTask<FlushResult> flush = _inbound.Writer.FlushAsync();
                if (!flush.IsCompletedSuccessfully)
                {
                    throw new InvalidOperationException("Inbound stream buffer paused despite an unbounded threshold.");
                }
            }
        }

        // Outside the lock: the sink sends, and reports what was taken (which takes the lock again).
        sink?.OnInboundData(payload);
        if (endStream)
        {
            EndInbound();
        }
    }

    internal void EndInbound()
    {
        TryTransition(StreamState.RemoteEnded, StreamState.Open, out StreamState added);
        if ((added & StreamState.RemoteEnded) != 0 && Volatile.Read(ref _sink) is { } sink)
        {
            sink.OnInboundEnd();
        }
    }

    internal void OnWindowUpdate(int increment) => _sendWindow.Grant(increment);

    internal void OnReset(ProtocolErrorCode code) => Fail(code, new StreamResetException(code), dropQueued: true);

    internal void OnUplinkClosed(UplinkClosedException reason) => Fail(ProtocolErrorCode.Cancelled, reason, dropQueued: true);

    /// <summary>True when this stream has waited at least <paramref name="timeoutMs"/> for its response head (server side).</summary>
    internal bool IsResponseHeadOverdue(long now, long timeoutMs) =>
        _responseHead is { Task.IsCompleted: false } && Volatile.Read(ref _arrivedHead) is null && now - _openedAt >= timeoutMs;

    /// <param name="dropQueued">Whether frames this side still has queued are dropped: the peer will not read them.</param>
    private void Fail(ProtocolErrorCode code, Exception reason, bool dropQueued) =>
        TryTransition(StreamState.Aborted, StreamState.Aborted, out _, new StreamAbort(code, reason, dropQueued));
}
