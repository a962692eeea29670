using System.Runtime.InteropServices;

namespace Tunnel2.Loops.Interop;

/// <summary>
/// The libc calls the loop needs (Linux, x86-64), declared with LibraryImport so that the marshalling is generated at
/// build time and Native AOT needs no run-time stubs. Callers read errno with <see cref="Errno"/> right after a call.
/// </summary>
internal static unsafe partial class LibC
{
    public const int EpollIn = 0x001, EpollOut = 0x004, EpollErr = 0x008, EpollHup = 0x010;
    public const int EpollCtlAdd = 1, EpollCtlDel = 2, EpollCtlMod = 3;
    public const int EIntr = 4, EAgain = 11, EPipe = 32, EInProgress = 115, EConnReset = 104, EConnRefused = 111,
        ETimedOut = 110;
    public const int CloExec = 0x80000, NonBlock = 0x800;
    public const int AfInet = 2, AfInet6 = 10, SockStream = 1;
    public const int SolSocket = 1, SoError = 4, SoLinger = 13, IpProtoTcp = 6, TcpNoDelay = 1;
    public const int MsgNoSignal = 0x4000, ShutWr = 1;

    [LibraryImport("libc", SetLastError = true)]
    public static partial int epoll_create1(int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int epoll_ctl(int epfd, int op, int fd, EpollEvent* ev);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int epoll_wait(int epfd, EpollEvent* events, int maxEvents, int timeout);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int eventfd(uint initval, int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static partial nint read(int fd, void* buf, nint count);

    [LibraryImport("libc", SetLastError = true)]
    public static partial nint write(int fd, void* buf, nint count);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int close(int fd);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int socket(int domain, int type, int protocol);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int connect(int fd, byte* addr, int addrLen);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int accept4(int fd, nint addr, nint addrLen, int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static partial nint recv(int fd, byte* buf, nint len, int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static partial nint send(int fd, byte* buf, nint len, int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static partial nint readv(int fd, IoVector* vectors, int vectorCount);

    [LibraryImport("libc", SetLastError = true)]
    public static partial nint sendmsg(int fd, MessageHeader* message, int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int shutdown(int fd, int how);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int setsockopt(int fd, int level, int name, void* value, int length);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int getsockopt(int fd, int level, int name, void* value, int* length);

    public static int Errno => Marshal.GetLastPInvokeError();
}
