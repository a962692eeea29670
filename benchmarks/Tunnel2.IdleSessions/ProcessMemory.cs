using System.Globalization;

namespace Tunnel2.IdleSessions;

/// <summary>Resident set size of a process, from /proc/PID/status (Linux).</summary>
internal static class ProcessMemory
{
    /// <summary>VmRSS in KiB, or null when the process is gone or /proc is not there.</summary>
    public static long? ReadRssKiB(int pid)
    {
        try
        {
            foreach (string line in File.ReadLines($"/proc/{pid}/status"))
            {
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
                {
                    string number = line["VmRSS:".Length..].Trim().Split(' ')[0];
                    return long.Parse(number, NumberStyles.None, CultureInfo.InvariantCulture);
                }
            }
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }

        return null;
    }

    public static string Format(long? kib) => kib is { } value ? $"{value / 1024.0:F1} MiB" : "n/a";
}
