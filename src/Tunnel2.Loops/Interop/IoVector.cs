using System.Runtime.InteropServices;

namespace Tunnel2.Loops.Interop;

/// <summary>struct iovec: one piece of a gather send.</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct IoVector
{
    public byte* Base;
    public nuint Length;
}

/// <summary>struct msghdr (x86-64 layout) for sendmsg: no address, no control data, only the pieces.</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct MessageHeader
{
    public void* Name;
    public uint NameLength;
    public IoVector* Vectors;
    public nuint VectorCount;
    public void* Control;
    public nuint ControlLength;
    public int Flags;
}
