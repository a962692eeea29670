using System.Buffers.Binary;

namespace Tunnel2.RelayPrototypes;

/// <summary>
/// The multiplexing designs' wire format, ssh-like: a 9-byte header (type, stream id, length) and, for
/// <see cref="FrameType.Data"/>, that many payload bytes. <see cref="FrameType.Window"/> returns credit: its length field
/// is the number of bytes the receiver has handed to its socket. <see cref="FrameType.Fin"/> is a half-close (end of that
/// side's bytes), <see cref="FrameType.Reset"/> ends the stream both ways at once after a socket error. Streams are
/// opened by the entry only; ids are not reused.
/// </summary>
internal enum FrameType : byte
{
    Open = 1,
    Data = 2,
    Window = 3,
    Fin = 4,
    Reset = 5,
}

internal static class Frame
{
    public const int HeaderSize = 9;

    /// <summary>
    /// Largest payload of one data frame: one read from a caller's or target's socket. 64 KiB, or RELAY_FRAME_KIB on both
    /// processes alike (the bulk variants measure 256 KiB: fewer frames and syscalls per MB).
    /// </summary>
    public static readonly int MaxPayload =
        int.TryParse(Environment.GetEnvironmentVariable("RELAY_FRAME_KIB"), out int kib) && kib >= 4 ? kib * 1024 : 64 * 1024;

    /// <summary>
    /// Largest read from a caller's or target's socket: <see cref="MaxPayload"/>, or RELAY_READ_KIB when larger, in which
    /// case one read (readv) fills several frames' payloads behind their headers (design a only).
    /// </summary>
    public static readonly int ReadSize =
        int.TryParse(Environment.GetEnvironmentVariable("RELAY_READ_KIB"), out int kib) && kib * 1024 > MaxPayload ? kib * 1024 : MaxPayload;

    /// <summary>
    /// Per-stream window: bytes a side may send before the receiver returns credit. Tunnel2 and yamux: 256 KiB (the
    /// default); OpenSSH's forwarded channels: 2 MiB. RELAY_WINDOW_KIB sets another, on both processes alike.
    /// </summary>
    public static readonly int Window =
        int.TryParse(Environment.GetEnvironmentVariable("RELAY_WINDOW_KIB"), out int kib) && kib >= 64 ? kib * 1024 : 256 * 1024;

    /// <summary>Credit is returned once this much was handed on, as ssh does at half its window.</summary>
    public static readonly int WindowUpdateThreshold = Window / 2;

    public static void Write(Span<byte> header, FrameType type, uint stream, int length)
    {
        header[0] = (byte)type;
        BinaryPrimitives.WriteUInt32BigEndian(header[1..], stream);
        BinaryPrimitives.WriteInt32BigEndian(header[5..], length);
    }

    public static (FrameType Type, uint Stream, int Length) Read(ReadOnlySpan<byte> header) =>
        ((FrameType)header[0], BinaryPrimitives.ReadUInt32BigEndian(header[1..]), BinaryPrimitives.ReadInt32BigEndian(header[5..]));
}
