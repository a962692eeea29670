using System.Net;
using System.Runtime.InteropServices;

namespace Tunnel2.RelayPrototypes;

/// <summary>The few libc calls the own loops need: epoll, non-blocking sockets on raw descriptors, pipes and splice
/// (Linux, x86-64).</summary>
internal static unsafe partial class Native
{
    public const int EpollIn = 0x001, EpollOut = 0x004, EpollErr = 0x008, EpollHup = 0x010;
    public const int EpollCtlAdd = 1, EpollCtlDel = 2, EpollCtlMod = 3;
    public const int EAgain = 11, EInProgress = 115, EIntr = 4;
    private const int AfInet = 2, SockStream = 1, SockNonBlock = 0x800, SockCloExec = 0x80000;
    private const int SolSocket = 1, SoReuseAddr = 2, SoError = 4, IpProtoTcp = 6, TcpNoDelay = 1;
    private const int MsgNoSignal = 0x4000, MsgMore = 0x8000, ShutWr = 1;
    private const int SoSndBufForce = 32, SoRcvBufForce = 33;

    /// <summary>RELAY_SOCKBUF_KIB: SO_SNDBUF and SO_RCVBUF of every socket (forced past rmem_max/wmem_max, which needs
    /// root); 0, the default, leaves the kernel's autotuning alone.</summary>
    private static readonly int SocketBuffer =
        int.TryParse(Environment.GetEnvironmentVariable("RELAY_SOCKBUF_KIB"), out int kib) && kib > 0 ? kib * 1024 : 0;

    /// <summary>RELAY_NODELAY=0 leaves Nagle on (the bulk variants); TCP_NODELAY is set otherwise, as Tunnel2 does.</summary>
    private static readonly bool NoDelayWanted = Environment.GetEnvironmentVariable("RELAY_NODELAY") != "0";
    private const int FSetPipeSize = 1031;
    private const uint SpliceMove = 1, SpliceNonBlock = 2;

    /// <summary>struct epoll_event, packed on x86-64.</summary>
    [StructLayout(LayoutKind.Sequential, Pack = 1)]
    public struct EpollEvent
    {
        public uint Events;
        public ulong Data;
    }

    [LibraryImport("libc", SetLastError = true)]
    public static partial int epoll_create1(int flags);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int epoll_ctl(int epfd, int op, int fd, EpollEvent* ev);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int epoll_wait(int epfd, EpollEvent* events, int maxEvents, int timeout);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int socket(int domain, int type, int protocol);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int bind(int fd, byte* addr, int addrLen);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int listen(int fd, int backlog);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int accept4(int fd, nint addr, nint addrLen, int flags);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int connect(int fd, byte* addr, int addrLen);

    [LibraryImport("libc", SetLastError = true)]
    private static partial nint recv(int fd, byte* buf, nint len, int flags);

    [LibraryImport("libc", SetLastError = true)]
    private static partial nint readv(int fd, IoVec* iov, int count);

    [StructLayout(LayoutKind.Sequential)]
    private struct IoVec
    {
        public byte* Base;
        public nint Length;
    }

    [LibraryImport("libc", SetLastError = true)]
    private static partial nint send(int fd, byte* buf, nint len, int flags);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int shutdown(int fd, int how);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int close(int fd);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int setsockopt(int fd, int level, int name, int* value, int length);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int getsockopt(int fd, int level, int name, int* value, int* length);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int pipe2(int* fds, int flags);

    [LibraryImport("libc", SetLastError = true)]
    private static partial nint splice(int fdIn, long* offIn, int fdOut, long* offOut, nint len, uint flags);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int fcntl(int fd, int cmd, int arg);

    public static int Errno => Marshal.GetLastPInvokeError();

    /// <summary>A non-blocking pipe of <paramref name="size"/> bytes: (read end, write end).</summary>
    public static (int Read, int Write) Pipe(int size)
    {
        int* fds = stackalloc int[2];
        if (pipe2(fds, SockNonBlock | SockCloExec) != 0)
        {
            throw new InvalidOperationException($"pipe2 failed: errno {Errno}");
        }
        if (fcntl(fds[1], FSetPipeSize, size) < 0)
        {
            Console.Error.WriteLine($"F_SETPIPE_SZ {size} failed: errno {Errno}");
        }
        return (fds[0], fds[1]);
    }

    /// <summary>splice(2) between a socket and a pipe, non-blocking: bytes moved; 0 at end of stream; -1 when nothing
    /// can move now (EAGAIN); -2 on an error.</summary>
    public static int Splice(int from, int to, int length)
    {
        while (true)
        {
            nint n = splice(from, null, to, null, length, SpliceMove | SpliceNonBlock);
            if (n >= 0)
            {
                return (int)n;
            }
            int errno = Errno;
            if (errno != EIntr)
            {
                return errno == EAgain ? -1 : -2;
            }
        }
    }

    public static void Control(int epfd, int op, int fd, int events)
    {
        var ev = new EpollEvent { Events = (uint)events, Data = (ulong)fd };
        if (epoll_ctl(epfd, op, fd, &ev) != 0)
        {
            throw new InvalidOperationException($"epoll_ctl({op}, {fd}) failed: errno {Errno}");
        }
    }

    public static int Listen(IPEndPoint at)
    {
        int fd = NewSocket();
        int one = 1;
        setsockopt(fd, SolSocket, SoReuseAddr, &one, sizeof(int));
        byte* addr = stackalloc byte[16];
        SockAddr(at, addr);
        if (bind(fd, addr, 16) != 0 || listen(fd, 4096) != 0)
        {
            throw new InvalidOperationException($"cannot listen on {at}: errno {Errno}");
        }
        return fd;
    }

    /// <summary>A non-blocking connect: returns the descriptor, connected or (usually) still connecting.</summary>
    public static int Connect(IPEndPoint to)
    {
        int fd = NewSocket();
        Tune(fd);
        byte* addr = stackalloc byte[16];
        SockAddr(to, addr);
        if (connect(fd, addr, 16) != 0 && Errno != EInProgress)
        {
            int errno = Errno;
            close(fd);
            throw new InvalidOperationException($"cannot connect to {to}: errno {errno}");
        }
        return fd;
    }

    /// <summary>The next pending connection, non-blocking, or -1 when there is none.</summary>
    public static int Accept(int listenFd)
    {
        int fd = accept4(listenFd, 0, 0, SockNonBlock | SockCloExec);
        if (fd >= 0)
        {
            Tune(fd);
        }
        return fd;
    }

    /// <summary>Bytes read; 0 at end of stream; -1 when nothing is there now (EAGAIN); -2 on an error.</summary>
    public static int Recv(int fd, Span<byte> into)
    {
        fixed (byte* p = into)
        {
            while (true)
            {
                nint n = recv(fd, p, into.Length, 0);
                if (n >= 0)
                {
                    return (int)n;
                }
                int errno = Errno;
                if (errno != EIntr)
                {
                    return errno == EAgain ? -1 : -2;
                }
            }
        }
    }

    /// <summary>
    /// One read of up to <paramref name="total"/> bytes into <paramref name="into"/> as frames' payloads: pieces of
    /// <paramref name="segment"/> bytes, each behind a <paramref name="gap"/>-byte hole for its header (readv). Returns as
    /// <see cref="Recv"/>.
    /// </summary>
    public static int RecvFramed(int fd, Span<byte> into, int segment, int gap, int total)
    {
        const int MaxSegments = 64;
        IoVec* iov = stackalloc IoVec[MaxSegments];
        fixed (byte* p = into)
        {
            int count = 0, offset = 0;
            for (int left = total; left > 0 && count < MaxSegments; count++, left -= segment)
            {
                iov[count].Base = p + offset + gap;
                iov[count].Length = Math.Min(segment, left);
                offset += gap + segment;
            }
            while (true)
            {
                nint n = readv(fd, iov, count);
                if (n >= 0)
                {
                    return (int)n;
                }
                int errno = Errno;
                if (errno != EIntr)
                {
                    return errno == EAgain ? -1 : -2;
                }
            }
        }
    }

    /// <summary>Bytes sent (0 when the socket's buffer is full); -2 on an error. <paramref name="more"/>: MSG_MORE, more
    /// bytes follow at once (a frame header before its spliced payload), so that the header does not leave alone.</summary>
    public static int Send(int fd, ReadOnlySpan<byte> from, bool more = false)
    {
        fixed (byte* p = from)
        {
            while (true)
            {
                nint n = send(fd, p, from.Length, more ? MsgNoSignal | MsgMore : MsgNoSignal);
                if (n >= 0)
                {
                    return (int)n;
                }
                int errno = Errno;
                if (errno != EIntr)
                {
                    return errno == EAgain ? 0 : -2;
                }
            }
        }
    }

    public static void ShutdownWrite(int fd) => shutdown(fd, ShutWr);

    /// <summary>SO_ERROR: 0 once a non-blocking connect has succeeded.</summary>
    public static int SocketError(int fd)
    {
        int value = 0, length = sizeof(int);
        return getsockopt(fd, SolSocket, SoError, &value, &length) == 0 ? value : Errno;
    }

    private static int NewSocket()
    {
        int fd = socket(AfInet, SockStream | SockNonBlock | SockCloExec, 0);
        return fd >= 0 ? fd : throw new InvalidOperationException($"socket() failed: errno {Errno}");
    }

    /// <summary>The socket options every relayed socket gets: TCP_NODELAY and the buffer sizes, as the environment says.</summary>
    public static void Tune(int fd)
    {
        int value = NoDelayWanted ? 1 : 0;
        setsockopt(fd, IpProtoTcp, TcpNoDelay, &value, sizeof(int));
        if (SocketBuffer > 0)
        {
            value = SocketBuffer;
            setsockopt(fd, SolSocket, SoSndBufForce, &value, sizeof(int));
            setsockopt(fd, SolSocket, SoRcvBufForce, &value, sizeof(int));
        }
    }

    /// <summary>struct sockaddr_in: family, port (network order), IPv4 address, 8 zero bytes.</summary>
    private static void SockAddr(IPEndPoint endPoint, byte* addr)
    {
        new Span<byte>(addr, 16).Clear();
        *(ushort*)addr = AfInet;
        addr[2] = (byte)(endPoint.Port >> 8);
        addr[3] = (byte)endPoint.Port;
        endPoint.Address.MapToIPv4().TryWriteBytes(new Span<byte>(addr + 4, 4), out _);
    }
}
