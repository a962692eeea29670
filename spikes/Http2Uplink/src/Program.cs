using System.Net;
using Tunnel2.Spikes.Http2Uplink;

const string Usage = """
    Usage:
      H2Spike server [--public 127.0.0.1:12200] [--tunnel 127.0.0.1:12201]
      H2Spike client [--server 127.0.0.1:12201] [--session ID] [--backend http://127.0.0.1:12007]

    A spike (issue #7, item 5): Tunnel2's forwarding carried over HTTP/2 on the uplink TCP connection.
    No token, no drain, no limits; see spikes/Http2Uplink/README.md.
    """;

if (args.Length == 0 || args[0] is "-h" or "--help")
{
    Console.WriteLine(Usage);
    return args.Length == 0 ? 2 : 0;
}

var options = new Dictionary<string, string>(StringComparer.Ordinal);
for (var i = 1; i < args.Length; i += 2)
{
    if (!args[i].StartsWith("--", StringComparison.Ordinal) || i + 1 >= args.Length)
    {
        Console.Error.WriteLine($"bad argument '{args[i]}'\n{Usage}");
        return 2;
    }

    options[args[i][2..]] = args[i + 1];
}

string Option(string name, string fallback) => options.GetValueOrDefault(name, fallback);

switch (args[0])
{
    case "server":
        return await SpikeServer.RunAsync(
            IPEndPoint.Parse(Option("public", "127.0.0.1:12200")),
            IPEndPoint.Parse(Option("tunnel", "127.0.0.1:12201")));
    case "client":
        var server = Option("server", "127.0.0.1:12201");
        var colon = server.LastIndexOf(':');
        var session = Option("session", "22222222-2222-2222-2222-222222222222");
        if (colon < 0 || !int.TryParse(server[(colon + 1)..], out var port) || !Handshake.IsValidSession(session))
        {
            Console.Error.WriteLine($"bad --server or --session\n{Usage}");
            return 2;
        }

        return await SpikeClient.RunAsync(
            new DnsEndPoint(server[..colon], port),
            session,
            new Uri(Option("backend", "http://127.0.0.1:12007")));
    default:
        Console.Error.WriteLine(Usage);
        return 2;
}
