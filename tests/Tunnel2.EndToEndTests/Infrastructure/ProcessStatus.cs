using System.Globalization;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>One process as the kernel sees it now (/proc/PID): its threads, resident memory and open descriptors.</summary>
public readonly record struct ProcessStatus(int Threads, long ResidentBytes, int OpenFiles)
{
    /// <summary>Reads /proc/<paramref name="processId"/>/status and counts /proc/<paramref name="processId"/>/fd.</summary>
    public static ProcessStatus Of(int processId)
    {
        int threads = -1;
        long resident = -1;
        foreach (string line in File.ReadLines($"/proc/{processId}/status"))
        {
            if (line.StartsWith("Threads:", StringComparison.Ordinal))
            {
                threads = int.Parse(line.AsSpan("Threads:".Length).Trim(), CultureInfo.InvariantCulture);
            }
            else if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                resident = Kilobytes(line.AsSpan("VmRSS:".Length)) * 1024; // "  123456 kB"
            }
        }

        Assert.True(threads > 0 && resident > 0, $"/proc/{processId}/status has no Threads or VmRSS line");
        return new ProcessStatus(threads, resident, Directory.GetFileSystemEntries($"/proc/{processId}/fd").Length);
    }

    private static long Kilobytes(ReadOnlySpan<char> value)
    {
        value = value.Trim();
        return long.Parse(value[..value.IndexOf(' ')], CultureInfo.InvariantCulture);
    }
}
