using System.Net.Sockets;
using Tunnel2.Loops.Interop;

namespace Tunnel2.Loops.Sockets;

/// <summary>
/// Takes a socket that the runtime's async engine has used out of that engine's epoll sets, before a loop adopts it.
/// The engine registers a socket at its first async call, edge-triggered, for good: adopted as it is, each segment the
/// peer sends would still wake the runtime's epoll thread (and, through its event queue, a thread-pool worker) for
/// nothing. The runtime offers no call for this, so the engine's epoll descriptors are found once, among the process's
/// descriptors (<c>/proc/self/fd</c>), and the socket is removed from each (one syscall apiece; a set it is not in, such
/// as a loop's own, answers ENOENT). Only for a socket with no async operation pending that nothing will use through
/// the runtime again. Off the loop: the first call reads a directory.
/// </summary>
public static class RuntimeEpoll
{
    private static int[]? s_sets;

    /// <returns>How many epoll sets the socket left (0: it was in none, or this platform has no such sets).</returns>
    public static unsafe int Leave(Socket socket)
    {
        if (!EventLoop.IsSupported)
        {
            return 0;
        }

        int fd = (int)socket.SafeHandle.DangerousGetHandle();
        int left = 0;
        foreach (int set in s_sets ??= FindSets())
        {
            // A descriptor number closed and reused since answers EINVAL or EBADF: nothing is touched.
            left += LibC.epoll_ctl(set, LibC.EpollCtlDel, fd, null) == 0 ? 1 : 0;
        }

        return left;
    }

    /// <summary>The process's epoll descriptors now (the runtime's engines, which live as long as the process, and any loop's).</summary>
    private static int[] FindSets()
    {
        var sets = new List<int>();
        try
        {
            foreach (string entry in Directory.EnumerateFileSystemEntries("/proc/self/fd"))
            {
                if (new FileInfo(entry).LinkTarget == "anon_inode:[eventpoll]" && int.TryParse(Path.GetFileName(entry), out int fd))
                {
                    sets.Add(fd);
                }
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // No /proc: the sockets stay in the runtime's sets, which costs wakes, not correctness.
        }

        return [.. sets];
    }
}
