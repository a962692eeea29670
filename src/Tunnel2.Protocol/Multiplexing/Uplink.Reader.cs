using System.Buffers;
using System.Buffers.Binary;
using System.IO.Pipelines;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The uplink's own job: the one reader loop, which parses frames off the transport and hands each to its stream (or
/// handles it, for the connection-level frames) in the order they arrived.
/// </summary>
public sealed partial class Uplink
{
    /// <summary>Streams whose response head came in the batch being dispatched (reader loop only).</summary>
    private readonly List<UplinkStream> _arrivedHeads = [];

    private async Task ReadLoopAsync()
    {
        PipeReader input = _transport!.Input;
        try
        {
            while (true)
            {
                ReadResult result = await input.ReadAsync().ConfigureAwait(false);
                if (result.IsCanceled || !DispatchBatch(input, result))
                {
                    return;
                }
            }
        }
        catch (ProtocolViolationException ex)
        {
            Log.ProtocolViolation(_logger, Name, ex.Message);
            TryEnqueue(OutboundFrame.GoAway(_streams.LastStreamId, ProtocolErrorCode.ProtocolError));
            Close($"protocol error: {ex.Message}");
        }
        catch (Exception ex) when (IsTransportFailure(ex))
        {
            Close($"transport error: {ex.Message}");
        }
        catch (Exception ex)
        {
            Log.UnexpectedFailure(_logger, Name, ex);
            Close($"internal error: {ex.Message}");
        }
        finally
        {
            _arrivedHeads.Clear(); // a batch cut short by an error: its streams fail with the uplink
            await input.CompleteAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Hands every whole frame of one read to its stream, in order.</summary>
    /// <returns>False once the transport has ended (after its last whole frame).</returns>
    private bool DispatchBatch(PipeReader input, in ReadResult result)
    {
        ReadOnlySequence<byte> buffer = result.Buffer;
        try
        {
            DispatchFrames(ref buffer, mayStartOnReader: true);
        }
        finally
        {
            input.AdvanceTo(buffer.Start, buffer.End);
        }

        if (result.IsCompleted && !buffer.IsEmpty)
        {
            throw new ProtocolViolationException($"Connection ended inside a frame ({buffer.Length} bytes left).");
        }

        return !result.IsCompleted;
    }

    /// <summary>
    /// Hands every whole frame at the start of <paramref name="buffer"/> to its stream, in order, and leaves
    /// <paramref name="buffer"/> at what is left (a partial frame, or nothing). Synchronous: the pipe's reader task and
    /// the event loop's reader (<see cref="LoopUplinkTransport"/>) both call it.
    /// </summary>
    /// <param name="mayStartOnReader">False on an event loop: no handler may start its work on the reading thread.</param>
    internal void DispatchFrames(ref ReadOnlySequence<byte> buffer, bool mayStartOnReader)
    {
        _keepAlive.OnReceived();
        long before = buffer.Length;
        int frames = 0;
        try
        {
            while (FrameReader.TryReadFrame(ref buffer, Settings.MaxFramePayload, out FrameHeader header, out ReadOnlySequence<byte> payload))
            {
                frames++;
                Dispatch(header, payload, lastInBatch: mayStartOnReader && buffer.IsEmpty);
            }
        }
        finally
        {
            if (frames > 0)
            {
                UplinkMetrics.Received(frames, before - buffer.Length);
            }
        }

        if (_arrivedHeads.Count > 0)
        {
            DeliverResponseHeads(mayStartOnReader);
        }

        // Between batches no dispatch holds a stream it found in the table: finished ones may be cleared now.
        if (StreamPool.HasFinished)
        {
            StreamPool.RecycleFinished();
        }
    }

    /// <summary>
    /// Hands the response heads of the batch just dispatched to their owners (server side). A whole small answer is
    /// relayed on this thread, so it crosses the process without another hand-off; but at most
    /// <see cref="UplinkSettings.InlineAnswersPerBatch"/> of them, the last ones, so that under load the others go to
    /// the pool first and run on the other cores meanwhile (a reader that did every send kept one core busy while
    /// the other idled, docs/benchmarks/2026-11-23-performance.md). On an event loop only those whose owner awaits on
    /// this loop itself (<see cref="UplinkStream.OwnerOnLoop"/>: it runs there anyway, so the hand-off would be a wake
    /// and a hop back); any other owner's relay may block and log, which the loop never does.
    /// </summary>
    private void DeliverResponseHeads(bool mayRelayOnReader)
    {
        List<UplinkStream> heads = _arrivedHeads;
        int inlineFrom = mayRelayOnReader ? heads.Count - Settings.InlineAnswersPerBatch : heads.Count;
        for (int i = 0; i < heads.Count; i++)
        {
            UplinkStream stream = heads[i];
            stream.DeliverResponseHead(inline: (i >= inlineFrom || stream.OwnerOnLoop) && stream.IsWholeSmallAnswer);
        }

        heads.Clear();
    }

    /// <param name="lastInBatch">The frame is the last whole one of its read (<see cref="AcceptStream"/>).</param>
    private void Dispatch(in FrameHeader header, in ReadOnlySequence<byte> payload, bool lastInBatch)
    {
        switch (header.Type)
        {
            case FrameType.RequestHead:
                AcceptStream(header, payload, lastInBatch);
                break;
            case FrameType.ResponseHead:
                OnResponseHeadFrame(header, payload);
                break;
            case FrameType.Data:
                FindStream(header)?.OnData(payload, header.EndStream);
                break;
            case FrameType.Reset:
                OnResetFrame(header, payload);
                break;
            case FrameType.WindowUpdate:
                OnWindowUpdateFrame(header, payload);
                break;
            case FrameType.Ping:
                OnPingFrame(header, payload);
                break;
            case FrameType.Pong:
                OnPong(ReadFixed64(header, payload));
                break;
            case FrameType.GoAway:
                OnGoAwayFrame(header, payload);
                break;
            case FrameType.Health:
                OnHealth(header, payload);
                break;
            case FrameType.TcpOpen:
                AcceptTcpStream(header, payload);
                break;
        }
    }

    private void OnResponseHeadFrame(in FrameHeader header, in ReadOnlySequence<byte> payload)
    {
        if (Role != UplinkRole.Server)
        {
            throw new ProtocolViolationException("A client received a response head.");
        }

        // Handed over after the batch (DeliverResponseHeads): its body may be in it too. A TCP stream has no head on the
        // wire (its stand-in is set when it opens), so a ResponseHead frame for one is a second head, a protocol error.
        if (FindStream(header) is { } answered && answered.OnResponseHead(HeadCodec.ReadResponseHead(payload), header.EndStream))
        {
            _arrivedHeads.Add(answered);
        }
    }

    private void OnWindowUpdateFrame(in FrameHeader header, in ReadOnlySequence<byte> payload)
    {
        uint increment = ReadFixed32(header, payload);
        if (increment is 0 or > int.MaxValue)
        {
            throw new ProtocolViolationException($"Invalid window increment {increment}.");
        }

        if (header.StreamId != 0)
        {
            FindStream(header)?.OnWindowUpdate((int)increment);
        }
    }

    private void OnPingFrame(in FrameHeader header, in ReadOnlySequence<byte> payload)
    {
        if (_scheduler.QueuedPongs >= MaxQueuedPongs)
        {
            throw new ProtocolViolationException($"Ping flood: {MaxQueuedPongs} answers queued that the peer has not read.");
        }

        TryEnqueue(OutboundFrame.Pong(ReadFixed64(header, payload)));
    }

    private void OnGoAwayFrame(in FrameHeader header, in ReadOnlySequence<byte> payload)
    {
        ulong goAway = ReadFixed64(header, payload);
        lock (_openLock)
        {
            // Under the open lock: a stream is either queued before this point (so before any Pong answering
            // a Ping that follows the GoAway) or not opened at all. The drain handshake relies on that order.
            _peerDraining = true;
        }

        Log.PeerDraining(_logger, Name, (ProtocolErrorCode)(uint)goAway);
    }

    private void OnHealth(in FrameHeader header, in ReadOnlySequence<byte> payload)
    {
        if (Role != UplinkRole.Server || Settings.ProtocolVersion < Handshake.HandshakeProtocol.HealthVersion || header.StreamId != 0)
        {
            throw new ProtocolViolationException("A Health frame goes from a version-4 client to the server, on stream 0.");
        }

        uint state = ReadFixed32(header, payload);
        if (state > 1)
        {
            throw new ProtocolViolationException($"Health frame with state {state} (0 unready, 1 ready).");
        }

        bool ready = state == 1;
        if (_peerReady != ready)
        {
            _peerReady = ready;
            Log.PeerHealthChanged(_logger, Name, ready ? "ready" : "unready");
        }
    }

    /// <param name="lastInBatch">
    /// The head is the batch's last frame: a whole request (no body) may then be started on this thread
    /// (<see cref="UplinkStream.MayStartOnReader"/>), one per batch, so under load the others still spread over the pool.
    /// </param>
    private void AcceptStream(in FrameHeader header, in ReadOnlySequence<byte> payload, bool lastInBatch)
    {
        if (Role != UplinkRole.Client)
        {
            throw new ProtocolViolationException("The server received a request head.");
        }

        if (header.StreamId == 0 || header.StreamId <= _streams.LastStreamId)
        {
            throw new ProtocolViolationException($"Request head reuses or goes back to stream id {header.StreamId}.");
        }

        RequestHead head = HeadCodec.ReadRequestHead(payload);
        UplinkStream stream = UplinkStream.Start(this, header.StreamId, head, requestHasBody: !header.EndStream);
        OnPeerOpened(stream, header, mayStartOnReader: lastInBatch && header.EndStream && Settings.InlineAnswersPerBatch > 0);
    }

    /// <summary>A stream the server opened (a request head or a TcpOpen): in the table, refused if draining or over the limit, else handed on.</summary>
    /// <param name="mayStartOnReader">Whether its handler may start it on this thread (<see cref="UplinkStream.MayStartOnReader"/>).</param>
    private void OnPeerOpened(UplinkStream stream, in FrameHeader header, bool mayStartOnReader)
    {
        _streams.Add(stream);
        if (header.EndStream)
        {
            stream.EndInbound();
        }

        if (_localDraining)
        {
            stream.Reset(ProtocolErrorCode.Draining);
            stream.Dispose();
            return;
        }

        // The server keeps to the limit; this end may still hold a stream the server already counts as finished
        // (e.g. one it reset a moment ago), so one over the limit is refused, not treated as a protocol error.
        if (ActiveStreamCount > Settings.MaxConcurrentStreams)
        {
            Log.StreamRefusedOverLimit(_logger, Name, header.StreamId, Settings.MaxConcurrentStreams);
            stream.Reset(ProtocolErrorCode.Overloaded);
            stream.Dispose();
            return;
        }

        stream.MayStartOnReader = mayStartOnReader;
        if (stream.Tcp is null)
        {
            _streamHandler!.OnExchangeOpened(stream);
        }
        else
        {
            _streamHandler!.OnByteStreamOpened(stream);
        }

        stream.MayStartOnReader = false;
    }

    /// <summary>The stream a frame is for; null when it already finished; a protocol error when it never existed.</summary>
    private UplinkStream? FindStream(in FrameHeader header)
    {
        if (header.StreamId == 0)
        {
            throw new ProtocolViolationException($"{header.Type} frame on stream 0.");
        }

        if (_streams.TryGet(header.StreamId, out UplinkStream? stream))
        {
            return stream;
        }

        if (header.StreamId > _streams.LastStreamId)
        {
            throw new ProtocolViolationException($"{header.Type} frame for stream {header.StreamId}, which was never opened.");
        }

        return null;
    }

    private static uint ReadFixed32(in FrameHeader header, in ReadOnlySequence<byte> payload)
    {
        if (payload.Length != 4)
        {
            throw new ProtocolViolationException($"{header.Type} frame must carry 4 bytes, not {payload.Length}.");
        }

        Span<byte> bytes = stackalloc byte[4];
        payload.CopyTo(bytes);
        return BinaryPrimitives.ReadUInt32BigEndian(bytes);
    }

    private static ulong ReadFixed64(in FrameHeader header, in ReadOnlySequence<byte> payload)
    {
        if (payload.Length != 8 || header.StreamId != 0)
        {
            throw new ProtocolViolationException($"{header.Type} frame must carry 8 bytes on stream 0.");
        }

        Span<byte> bytes = stackalloc byte[8];
        payload.CopyTo(bytes);
        return BinaryPrimitives.ReadUInt64BigEndian(bytes);
    }
}
