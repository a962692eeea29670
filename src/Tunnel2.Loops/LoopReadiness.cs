namespace Tunnel2.Loops;

/// <summary>What a descriptor is ready for, or asked to be watched for: epoll's own bits, level-triggered.</summary>
[Flags]
public enum LoopReadiness
{
    None = 0,
    Read = 0x001,
    Write = 0x004,
    Error = 0x008,
    HangUp = 0x010,
}
