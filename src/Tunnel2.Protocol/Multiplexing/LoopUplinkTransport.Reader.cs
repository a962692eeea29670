using System.Buffers;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The reader on the loop: reads into the uplink's buffer and hands every whole frame to the uplink's dispatch, on the
/// loop's thread. A partial frame stays at the buffer's start for the next read; the buffer grows to one whole frame at
/// most (the protocol's largest), so the loop never holds more than that: back-pressure is the streams' windows.
/// </summary>
internal sealed partial class LoopUplinkTransport
{
    private const int ReadBufferSize = 64 * 1024;

    /// <summary>Reads per readiness before the loop turns to other descriptors (it is level-triggered: it comes back).</summary>
    private const int ReadsPerTurn = 4;

    private byte[] _readBuffer = ArrayPool<byte>.Shared.Rent(ReadBufferSize);
    private int _readStart;
    private int _readEnd;
    private bool _readStopped;

    void ILoopSocketHandler.OnReadable(LoopSocket socket)
    {
        for (int reads = 0; reads < ReadsPerTurn && !_readStopped; reads++)
        {
            int room = MakeRoom();
            ReceiveResult result = socket.Receive(_readBuffer.AsSpan(_readEnd, room));
            switch (result.Status)
            {
                case ReceiveStatus.Data:
                    _readEnd += result.Bytes;
                    Parse();
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

    /// <summary>Bytes read elsewhere (the handshake's), parsed as if the loop had read them.</summary>
    private void Receive(ReadOnlySpan<byte> bytes)
    {
        while (!bytes.IsEmpty && !_readStopped)
        {
            int room = MakeRoom();
            int take = Math.Min(room, bytes.Length);
            bytes[..take].CopyTo(_readBuffer.AsSpan(_readEnd));
            _readEnd += take;
            bytes = bytes[take..];
            Parse();
        }
    }

    /// <summary>Dispatches every whole frame read so far; keeps a partial one.</summary>
    private void Parse()
    {
        var buffer = new ReadOnlySequence<byte>(_readBuffer, _readStart, _readEnd - _readStart);
        try
        {
            _uplink.DispatchFrames(ref buffer, mayStartOnReader: false);
        }
        catch (Exception ex)
        {
            _readStart = _readEnd = 0;
            EndRead(Uplink.IsTransportFailure(ex) ? new LoopReadEnd($"transport error: {ex.Message}", null) : new LoopReadEnd("dispatch failed", ex));
            return;
        }

        _readStart = _readEnd - (int)buffer.Length;
        if (_readStart == _readEnd)
        {
            _readStart = _readEnd = 0;
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
