using System.Buffers;

namespace Tunnel2.Protocol.Frames;

/// <summary>Cuts whole frames off the front of a buffer without copying their payloads.</summary>
public static class FrameReader
{
    /// <summary>
    /// Reads one frame if the buffer holds all of it. The declared length is checked against
    /// <paramref name="maxPayloadLength"/> as soon as the header is there, before any payload is buffered.
    /// </summary>
    /// <exception cref="ProtocolViolationException">Oversized frame or unknown frame type.</exception>
    public static bool TryReadFrame(
        ref ReadOnlySequence<byte> buffer,
        int maxPayloadLength,
        out FrameHeader header,
        out ReadOnlySequence<byte> payload)
    {
        if (buffer.Length < FrameHeader.Size)
        {
            header = default;
            payload = default;
            return false;
        }

        Span<byte> headerBytes = stackalloc byte[FrameHeader.Size];
        ReadOnlySpan<byte> first = buffer.FirstSpan;
        if (first.Length >= FrameHeader.Size)
        {
            header = FrameHeader.ReadFrom(first);
        }
        else
        {
            buffer.Slice(0, FrameHeader.Size).CopyTo(headerBytes);
            header = FrameHeader.ReadFrom(headerBytes);
        }

        if (header.PayloadLength < 0 || header.PayloadLength > maxPayloadLength)
        {
            throw new ProtocolViolationException(
                $"Frame of {(uint)header.PayloadLength} bytes exceeds the maximum of {maxPayloadLength}.");
        }

        if (header.Type is < FrameType.RequestHead or > FrameType.TcpOpen)
        {
            throw new ProtocolViolationException($"Unknown frame type {(byte)header.Type}.");
        }

        long frameLength = FrameHeader.Size + (long)header.PayloadLength;
        if (buffer.Length < frameLength)
        {
            payload = default;
            return false;
        }

        payload = buffer.Slice(FrameHeader.Size, header.PayloadLength);
        buffer = buffer.Slice(frameLength);
        return true;
    }
}
