using System.Net;

namespace Tunnel2.RelayPrototypes;

/// <summary>
/// Relay pairs for raw TCP, to measure designs before one is built into TunnelServer and TunnelClient
/// (docs/benchmarks/2026-11-29-relay-prototypes.md):
///   RelayPrototypes entry DESIGN --listen PORT --link PORT          callers on PORT, the agent's link on the second
///   RelayPrototypes agent DESIGN --link HOST:PORT --target HOST:PORT
/// DESIGN: loop (a: one thread, own epoll loop, multiplexed), pool (b: a data connection per caller, pre-dialled pool),
/// mux (c: the runtime's async sockets, multiplexed; set the DOTNET_SYSTEM_NET_SOCKETS_* variables from outside),
/// splice (b on a's loop: a data connection per caller, relayed with splice(2)), loop-lib (a rebuilt on the
/// Tunnel2.Loops library), loop-splice (a with payloads moved by splice(2) through pipes, no copy in user space).
/// RELAY_WINDOW_KIB, RELAY_FRAME_KIB, RELAY_SOCKBUF_KIB and RELAY_NODELAY tune loop and loop-splice (Frame, Native);
/// RELAY_READ_KIB lets loop read more than a frame at once.
/// </summary>
internal static class Program
{
    private static async Task<int> Main(string[] args)
    {
        if (args.Length != 6 || args[0] is not ("entry" or "agent") || args[1] is not ("loop" or "loop-lib" or "loop-splice" or "pool" or "mux" or "splice"))
        {
            Console.Error.WriteLine("usage: RelayPrototypes entry loop|loop-lib|loop-splice|pool|mux|splice --listen PORT --link PORT\n"
                + "       RelayPrototypes agent loop|loop-lib|loop-splice|pool|mux|splice --link HOST:PORT --target HOST:PORT");
            return 2;
        }
        string role = args[0], design = args[1];
        var options = new Dictionary<string, string> { [args[2]] = args[3], [args[4]] = args[5] };
        if (role == "entry")
        {
            var listen = new IPEndPoint(IPAddress.Loopback, int.Parse(options["--listen"]));
            var link = new IPEndPoint(IPAddress.Loopback, int.Parse(options["--link"]));
            Console.Error.WriteLine($"entry ({design}): callers on {listen}, link on {link}");
            switch (design)
            {
                case "loop": LoopRelay.Entry(listen, link).Run(); break;
                case "loop-lib": LoopLibRelay.Entry(listen, link).Run(); break;
                case "splice": SpliceRelay.Entry(listen, link).Run(); break;
                case "loop-splice": SpliceMuxRelay.Entry(listen, link).Run(); break;
                case "pool": await PoolRelay.RunEntryAsync(listen, link); break;
                default: await AsyncMuxRelay.RunEntryAsync(listen, link); break;
            }
        }
        else
        {
            var link = IPEndPoint.Parse(options["--link"]);
            var target = IPEndPoint.Parse(options["--target"]);
            Console.Error.WriteLine($"agent ({design}): link to {link}, target {target}");
            switch (design)
            {
                case "loop": LoopRelay.Agent(link, target).Run(); break;
                case "loop-lib": LoopLibRelay.Agent(link, target).Run(); break;
                case "splice": SpliceRelay.Agent(link, target).Run(); break;
                case "loop-splice": SpliceMuxRelay.Agent(link, target).Run(); break;
                case "pool": await PoolRelay.RunAgentAsync(link, target); break;
                default: await AsyncMuxRelay.RunAgentAsync(link, target); break;
            }
        }
        return 0;
    }
}
