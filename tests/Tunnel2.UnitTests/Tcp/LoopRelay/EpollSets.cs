using System.Globalization;

namespace Tunnel2.UnitTests.Tcp.LoopRelay;

/// <summary>
/// This process's epoll sets as Linux lists them (/proc/self/fdinfo of each eventpoll descriptor: a "tfd:" line per
/// descriptor watched, with its inode): how many of them watch the accepted end of a loopback TCP connection, found by
/// its ports in /proc/net/tcp. The runtime's socket engine has a set of its own, each event loop one.
/// </summary>
internal static class EpollSets
{
    /// <summary>The epoll sets that watch the connection accepted on <paramref name="localPort"/> from <paramref name="remotePort"/> (IPv4 loopback).</summary>
    public static int Watching(int localPort, int remotePort)
    {
        string inode = InodeOf(localPort, remotePort);
        int sets = 0;
        foreach (string fd in Directory.GetFiles("/proc/self/fd"))
        {
            if (Link(fd) != "anon_inode:[eventpoll]")
            {
                continue;
            }

            string info = Read($"/proc/self/fdinfo/{Path.GetFileName(fd)}");
            if (info.Split('\n').Any(line => line.StartsWith("tfd:", StringComparison.Ordinal) && Field(line, "ino:") == inode))
            {
                sets++;
            }
        }

        return sets;
    }

    /// <summary>The socket's inode, in hex as fdinfo writes it.</summary>
    private static string InodeOf(int localPort, int remotePort)
    {
        string local = $"0100007F:{localPort:X4}", remote = $"0100007F:{remotePort:X4}";
        foreach (string line in File.ReadLines("/proc/net/tcp").Skip(1))
        {
            string[] fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (fields[1] == local && fields[2] == remote)
            {
                return long.Parse(fields[9], CultureInfo.InvariantCulture).ToString("x", CultureInfo.InvariantCulture);
            }
        }

        throw new InvalidOperationException($"No connection {local} <- {remote} in /proc/net/tcp");
    }

    private static string? Field(string line, string name)
    {
        int at = line.IndexOf(name, StringComparison.Ordinal);
        return at < 0 ? null : line[(at + name.Length)..].Split(' ', 2)[0].Trim();
    }

    private static string? Link(string path)
    {
        try
        {
            return new FileInfo(path).LinkTarget;
        }
        catch (IOException)
        {
            return null; // closed meanwhile
        }
    }

    private static string Read(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (IOException)
        {
            return string.Empty;
        }
    }
}
