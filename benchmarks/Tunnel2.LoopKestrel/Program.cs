using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Tunnel2.LoopKestrel;
using Tunnel2.LoopKestrel.Transport;

// Prototype (issue 52): the same minimal Kestrel app on Kestrel's socket transport, on it with inline scheduling, or on a
// connection transport of our own on a Tunnel2.Loops event loop; GET /ping answers "pong", or, with --forward, every GET
// is forwarded with HttpClient (one proxy hop, YARP's client side). Measured in
// docs/benchmarks/2026-11-29-kestrel-on-loop-prototype.md.
if (args.Contains("--help") || args.Contains("-h"))
{
    Console.WriteLine("""
        Usage: Tunnel2.LoopKestrel --port PORT [--transport sockets|inline|loop] [--forward http://127.0.0.1:PORT]

        sockets: Kestrel's socket transport with its defaults. inline: the same with UnsafePreferInlineScheduling (run it
        with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT=1). loop: Kestrel on
        one Tunnel2.Loops event loop, the application scheduled inline on it.
        """);
    return 0;
}

WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(args);
int port = builder.Configuration.GetValue("port", 13501);
string transport = builder.Configuration["transport"] ?? "sockets";
string? forward = builder.Configuration["forward"];

builder.Logging.SetMinimumLevel(LogLevel.Warning);
builder.WebHost.ConfigureKestrel(kestrel =>
    kestrel.Listen(IPAddress.Loopback, port, listen => listen.Protocols = HttpProtocols.Http1));
switch (transport)
{
    case "sockets":
        break;
    case "inline":
        builder.WebHost.UseSockets(sockets => sockets.UnsafePreferInlineScheduling = true);
        break;
    case "loop":
        builder.Services.AddSingleton<IConnectionListenerFactory, LoopTransportFactory>();
        break;
    default:
        Console.Error.WriteLine($"loop-kestrel: unknown --transport {transport} (see --help)");
        return 2;
}

WebApplication app = builder.Build();
app.Run(forward is null ? PingApp.Answer : new ForwardApp(new Uri(forward)).Answer);
await app.RunAsync();
return 0;
