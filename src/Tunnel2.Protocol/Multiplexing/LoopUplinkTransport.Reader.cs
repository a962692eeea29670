using System.Buffers;
using System.Runtime.InteropServices;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The reader on the loop: hands every whole frame read to the uplink's dispatch, on the loop's thread. With no partial
/// frame held it reads into the loop's one receive buffer, so an idle uplink holds no buffer of its own (the server
/// keeps one uplink per client, most of them idle: docs/benchmarks/2026-11-23-idle-sessions.md); a partial frame left
/// over is copied into a pooled buffer of the uplink's, which the next reads fill and which goes back to the pool once
/// no partial frame is left. That buffer grows to one whole frame at most (the protocol's largest), so the loop never
/// holds more than that: back-pressure is the streams' windows.
/// </summary>
internal sealed partial class LoopUplinkTransport
{
    private const int ReadBufferSize = 64 * 1024;

    /// <summary>Reads per readiness before the loop turns to other descriptors (it is level-triggered: it comes back).</summary>
    private const int ReadsPerTurn = 4;

    /// <summary>Held only while a partial frame waits in it (from <see cref="_readStart"/> to <see cref="_readEnd"/>).</summary>
    private byte[] _readBuffer = [];
    private int _readStart;
    private int _readEnd;
    private bool _readStopped;

    void ILoopSocketHandler.OnReadable(LoopSocket socket)
    {
        for (int reads = 0; reads < ReadsPerTurn && !_readStopped; reads++)
        {
            bool holding = _readEnd > _readStart;
            int room;
            ReceiveResult result;
            ReadOnlyMemory<byte> shared = default;
            if (holding)
            {
                room = MakeRoom();
                result = socket.Receive(_readBuffer.AsSpan(_readEnd, room));
            }
            else
            {
                result = socket.ReceiveShared(out shared);
                room = SharedRoom(shared);
            }

            switch (result.Status)
            {
                case ReceiveStatus.Data:
                    if (holding)
                    {
                        _readEnd += result.Bytes;
                        Parse();
                    }
                    else
                    {
                        ParseAndKeep(shared);
                    }

                    if (result.Bytes < room)
                    {
                        return; // the kernel had no more: the next readiness brings the rest
                    }

                    break;
                case ReceiveStatus.WouldBlock:
                    return;
                case ReceiveStatus.EndOfStream:
                    int left = _readEnd - _readStart;
                    EndRead(left == 0
                        ? new LoopReadEnd("peer closed the connection", null)
                        : new LoopReadEnd("peer closed the connection", new ProtocolViolationException($"Connection ended inside a frame ({left} bytes left).")));
                    return;
                default:
                    EndRead(new LoopReadEnd($"transport error: {Describe(result.Error)}", null));
                    return;
            }
        }
    }

    /// <summary>The loop's receive buffer's size: a read that filled it may find more.</summary>
    private static int SharedRoom(ReadOnlyMemory<byte> shared) =>
        MemoryMarshal.TryGetArray(shared, out ArraySegment<byte> segment) ? segment.Array!.Length : shared.Length;

    /// <summary>Bytes read elsewhere (the handshake's), parsed as if the loop had read them.</summary>
    private void Receive(byte[] bytes) => ParseAndKeep(bytes);

    /// <summary>
    /// Dispatches every whole frame of <paramref name="bytes"/> (read into a buffer the uplink does not own, with no
    /// partial frame held before them), and copies a partial frame left over into the uplink's own buffer.
    /// </summary>
    private void ParseAndKeep(ReadOnlyMemory<byte> bytes)
    {
        var buffer = new ReadOnlySequence<byte>(bytes);
        if (!TryDispatch(ref buffer) || buffer.IsEmpty)
        {
            return;
        }

        int pending = (int)buffer.Length;
        Span<byte> header = stackalloc byte[FrameHeader.Size];
        int needed = pending >= FrameHeader.Size
            ? FrameHeader.Size + FrameHeader.ReadFrom(Peek(buffer, header)).PayloadLength
            : FrameHeader.Size;
        _readBuffer = ArrayPool<byte>.Shared.Rent(Math.Max(ReadBufferSize, needed));
        buffer.CopyTo(_readBuffer);
        _readStart = 0;
        _readEnd = pending;
    }

    private static ReadOnlySpan<byte> Peek(in ReadOnlySequence<byte> buffer, Span<byte> into)
    {
        buffer.Slice(0, into.Length).CopyTo(into);
        return into;
    }

    /// <summary>Dispatches every whole frame held in the uplink's buffer; keeps a partial one, or gives the buffer back.</summary>
    private void Parse()
    {
        var buffer = new ReadOnlySequence<byte>(_readBuffer, _readStart, _readEnd - _readStart);
        if (!TryDispatch(ref buffer))
        {
            return;
        }

        _readStart = _readEnd - (int)buffer.Length;
        if (_readStart == _readEnd)
        {
            ReturnReadBuffer();
        }
    }

    /// <returns>False when the dispatch failed: the reads have stopped and nothing is held.</returns>
    private bool TryDispatch(ref ReadOnlySequence<byte> buffer)
    {
        try
        {
            _uplink.DispatchFrames(ref buffer, mayStartOnReader: false);
            return true;
        }
        catch (Exception ex)
        {
            ReturnReadBuffer();
            EndRead(Uplink.IsTransportFailure(ex) ? new LoopReadEnd($"transport error: {ex.Message}", null) : new LoopReadEnd("dispatch failed", ex));
            return false;
        }
    }

    private void ReturnReadBuffer()
    {
        _readStart = _readEnd = 0;
        if (_readBuffer.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_readBuffer);
            _readBuffer = [];
        }
    }

    /// <summary>Room after what is buffered: a partial frame moves to the start, and the buffer grows when that frame needs it.</summary>
    private int MakeRoom()
    {
        if (_readEnd < _readBuffer.Length)
        {
            return _readBuffer.Length - _readEnd;
        }

        int pending = _readEnd - _readStart;
        int needed = pending >= FrameHeader.Size
            ? FrameHeader.Size + FrameHeader.ReadFrom(_readBuffer.AsSpan(_readStart, pending)).PayloadLength
            : FrameHeader.Size;
        byte[] into = needed > _readBuffer.Length ? ArrayPool<byte>.Shared.Rent(needed) : _readBuffer;
        Buffer.BlockCopy(_readBuffer, _readStart, into, 0, pending);
        if (!ReferenceEquals(into, _readBuffer))
        {
            ArrayPool<byte>.Shared.Return(_readBuffer);
            _readBuffer = into;
        }

        _readStart = 0;
        _readEnd = pending;
        return _readBuffer.Length - _readEnd;
    }

    /// <summary>On the loop, once: no more reads; the uplink hears why on the thread pool (<see cref="ReadEnded"/>).</summary>
    private void EndRead(LoopReadEnd end)
    {
        if (_readStopped)
        {
            return;
        }

        _readStopped = true;
        if (_socket is { IsClosed: false } socket)
        {
            socket.ReadPaused = true;
        }

        _readEnded.TrySetResult(end);
    }
}
