using System.Net;
using System.Net.Sockets;

namespace Tunnel2.Loops.Interop;

/// <summary>
/// Non-blocking socket calls on raw descriptors with errors as values: each returns bytes (or a descriptor) when it
/// worked and <c>-errno</c> when not (<c>-EAGAIN</c>: nothing can move now). EINTR is retried here.
/// </summary>
internal static unsafe class SocketCalls
{
    public static int Receive(int fd, Span<byte> into)
    {
        fixed (byte* p = into)
        {
            while (true)
            {
                nint n = LibC.recv(fd, p, into.Length, 0);
                if (n >= 0)
                {
                    return (int)n;
                }
                int errno = LibC.Errno;
                if (errno != LibC.EIntr)
                {
                    return -errno;
                }
            }
        }
    }

    /// <summary>Up to <paramref name="vectorCount"/> pinned pieces filled in order by one readv: bytes read (0 at the end), or -errno.</summary>
    public static int Receive(int fd, IoVector* vectors, int vectorCount)
    {
        while (true)
        {
            nint n = LibC.readv(fd, vectors, vectorCount);
            if (n >= 0)
            {
                return (int)n;
            }
            int errno = LibC.Errno;
            if (errno != LibC.EIntr)
            {
                return -errno;
            }
        }
    }

    public static int Send(int fd, ReadOnlySpan<byte> from)
    {
        fixed (byte* p = from)
        {
            while (true)
            {
                nint n = LibC.send(fd, p, from.Length, LibC.MsgNoSignal);
                if (n >= 0)
                {
                    return (int)n;
                }
                int errno = LibC.Errno;
                if (errno != LibC.EIntr)
                {
                    return -errno;
                }
            }
        }
    }

    /// <summary>Two pieces (a frame header and its payload) in one sendmsg.</summary>
    public static int Send(int fd, ReadOnlySpan<byte> first, ReadOnlySpan<byte> second)
    {
        fixed (byte* p1 = first)
        fixed (byte* p2 = second)
        {
            IoVector* vectors = stackalloc IoVector[2];
            vectors[0] = new IoVector { Base = p1, Length = (nuint)first.Length };
            vectors[1] = new IoVector { Base = p2, Length = (nuint)second.Length };
            var message = new MessageHeader { Vectors = vectors, VectorCount = 2 };
            while (true)
            {
                nint n = LibC.sendmsg(fd, &message, LibC.MsgNoSignal);
                if (n >= 0)
                {
                    return (int)n;
                }
                int errno = LibC.Errno;
                if (errno != LibC.EIntr)
                {
                    return -errno;
                }
            }
        }
    }

    public static int Accept(int listenFd)
    {
        while (true)
        {
            int fd = LibC.accept4(listenFd, 0, 0, LibC.NonBlock | LibC.CloExec);
            if (fd >= 0)
            {
                return fd;
            }
            int errno = LibC.Errno;
            if (errno != LibC.EIntr)
            {
                return -errno;
            }
        }
    }

    /// <summary>accept4 that also returns the peer's address (sockaddr_in or sockaddr_in6), read by <see cref="SocketAddresses.Read"/>.</summary>
    public static int Accept(int listenFd, Span<byte> address, out int addressLength)
    {
        fixed (byte* p = address)
        {
            while (true)
            {
                int length = address.Length;
                int fd = LibC.accept4(listenFd, (nint)p, (nint)(&length), LibC.NonBlock | LibC.CloExec);
                if (fd >= 0)
                {
                    addressLength = length;
                    return fd;
                }
                int errno = LibC.Errno;
                if (errno != LibC.EIntr)
                {
                    addressLength = 0;
                    return -errno;
                }
            }
        }
    }

    /// <summary>Up to <paramref name="vectorCount"/> pinned pieces in one sendmsg: bytes taken, or -errno.</summary>
    public static int Send(int fd, IoVector* vectors, int vectorCount)
    {
        var message = new MessageHeader { Vectors = vectors, VectorCount = (nuint)vectorCount };
        while (true)
        {
            nint n = LibC.sendmsg(fd, &message, LibC.MsgNoSignal);
            if (n >= 0)
            {
                return (int)n;
            }
            int errno = LibC.Errno;
            if (errno != LibC.EIntr)
            {
                return -errno;
            }
        }
    }

    /// <summary>A non-blocking connect: the new descriptor (connected or, usually, still connecting), or -errno.</summary>
    public static int Connect(IPEndPoint to)
    {
        bool v6 = to.AddressFamily == AddressFamily.InterNetworkV6;
        int fd = LibC.socket(v6 ? LibC.AfInet6 : LibC.AfInet, LibC.SockStream | LibC.NonBlock | LibC.CloExec, 0);
        if (fd < 0)
        {
            return -LibC.Errno;
        }
        byte* address = stackalloc byte[28];
        int length = SocketAddresses.Write(to, new Span<byte>(address, 28));
        if (LibC.connect(fd, address, length) == 0)
        {
            return fd;
        }
        int errno = LibC.Errno;
        if (errno == LibC.EInProgress || errno == LibC.EIntr)
        {
            return fd;
        }
        LibC.close(fd);
        return -errno;
    }

    /// <summary>A non-blocking connect of an existing non-blocking descriptor: 0 when it is connected or connecting, else -errno.</summary>
    public static int Connect(int fd, IPEndPoint to)
    {
        byte* address = stackalloc byte[28];
        int length = SocketAddresses.Write(to, new Span<byte>(address, 28));
        if (LibC.connect(fd, address, length) == 0)
        {
            return 0;
        }
        int errno = LibC.Errno;
        return errno == LibC.EInProgress || errno == LibC.EIntr ? 0 : -errno;
    }

    /// <summary>SO_ERROR: 0 once a non-blocking connect has succeeded, else its errno.</summary>
    public static int PendingError(int fd)
    {
        int value = 0, length = sizeof(int);
        return LibC.getsockopt(fd, LibC.SolSocket, LibC.SoError, &value, &length) == 0 ? value : LibC.Errno;
    }

    public static void SetNoDelay(int fd)
    {
        int one = 1;
        LibC.setsockopt(fd, LibC.IpProtoTcp, LibC.TcpNoDelay, &one, sizeof(int));
    }

    /// <summary>SO_LINGER on with a zero timeout: the next close sends a reset instead of a FIN.</summary>
    public static void SetAbortiveClose(int fd)
    {
        int* linger = stackalloc int[2];
        linger[0] = 1;
        linger[1] = 0;
        LibC.setsockopt(fd, LibC.SolSocket, LibC.SoLinger, linger, 2 * sizeof(int));
    }
}
