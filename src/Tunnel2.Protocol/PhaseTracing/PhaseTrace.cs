using System.Globalization;
using System.Text;

namespace Tunnel2.Protocol.PhaseTracing;

/// <summary>TEMPORARY (storm profile, not committed): timestamps per phase of the storm's probes, written at exit to $TUNNEL2_PHASE_TRACE.</summary>
public static class PhaseTrace
{
    private static readonly string? Path = Environment.GetEnvironmentVariable("TUNNEL2_PHASE_TRACE");
    private static readonly (DateTime At, string Phase, uint Id)[] Events = new (DateTime, string, uint)[200_000];
    private static int _count;

    static PhaseTrace()
    {
        if (Path is not null)
        {
            AppDomain.CurrentDomain.ProcessExit += (_, _) => Dump();
            new Thread(() => { while (true) { Thread.Sleep(5000); Dump(); } }) { IsBackground = true }.Start();
        }
    }

    public static bool On => Path is not null;

    public static bool IsProbe(string? target) => target is not null && target.Contains("/loadtest/ping", StringComparison.Ordinal);

    public static void Mark(string phase, uint id)
    {
        if (Path is null)
        {
            return;
        }

        int i = Interlocked.Increment(ref _count) - 1;
        if (i < Events.Length)
        {
            Events[i] = (DateTime.UtcNow, phase, id);
        }
    }

    public static void Dump()
    {
        var text = new StringBuilder();
        int n = Math.Min(Volatile.Read(ref _count), Events.Length);
        for (int i = 0; i < n; i++)
        {
            (DateTime at, string phase, uint id) = Events[i];
            double unix = (at - DateTime.UnixEpoch).TotalSeconds;
            text.Append(unix.ToString("F6", CultureInfo.InvariantCulture)).Append(',').Append(phase).Append(',').Append(id).Append('\n');
        }

        File.WriteAllText(Path! + "." + Environment.ProcessId, text.ToString());
    }
}
