using System.Runtime.InteropServices;

namespace Tunnel2.Loops.Interop;

/// <summary>struct epoll_event: packed on x86-64, the one architecture <see cref="LibC"/> declares it for.</summary>
[StructLayout(LayoutKind.Sequential, Pack = 1)]
internal struct EpollEvent
{
    public uint Events;
    public ulong Data;
}
