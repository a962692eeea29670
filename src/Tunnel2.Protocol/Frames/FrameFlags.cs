namespace Tunnel2.Protocol.Frames;

[Flags]
public enum FrameFlags : byte
{
    None = 0,

    /// <summary>The sender sends nothing more on this stream (valid on heads and data).</summary>
    EndStream = 0x1,
}
