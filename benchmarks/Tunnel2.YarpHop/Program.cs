using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Tunnel2.YarpHop;
using Yarp.ReverseProxy.Configuration;

// One reverse-proxy hop on YARP (microsoft/reverse-proxy) with its defaults: every request to --listen goes to
// --destination. compare.sh chains one or two of these in front of a backend, so that the tunnel's two .NET processes
// can be measured next to one and two hops of a mature .NET proxy, in the same sitting.
if (args.Contains("--help") || args.Contains("-h"))
{
    Console.WriteLine("""
        Usage: Tunnel2.YarpHop --listen http(s)://127.0.0.1:PORT --destination http://127.0.0.1:PORT

        One YARP reverse-proxy hop for tunnel2-load-tests/scripts/compare.sh: forwards every request it receives on
        --listen to --destination (YARP's defaults: HTTP/1.1 keep-alive connections to the destination, X-Forwarded-*
        headers added). Logs warnings and errors only. Stops on Ctrl-C or SIGTERM. An https:// --listen needs Kestrel's
        certificate settings, e.g. --Kestrel:Certificates:Default:Path=cert.pem --Kestrel:Certificates:Default:KeyPath=key.pem,
        and offers HTTP/2 and HTTP/1.1 by ALPN.
        """);
    return 0;
}

WebApplicationBuilder builder = WebApplication.CreateBuilder(args);
Uri? listen = LoopbackUrl(builder.Configuration["listen"], allowHttps: true);
Uri? destination = LoopbackUrl(builder.Configuration["destination"], allowHttps: false);
if (listen is null || destination is null)
{
    Console.Error.WriteLine("yarp-hop: --listen takes an http(s)://127.0.0.1:PORT URL and --destination an http://127.0.0.1:PORT one (see --help)");
    return 2;
}

builder.WebHost.UseUrls(listen.GetLeftPart(UriPartial.Authority));
builder.Logging.SetMinimumLevel(LogLevel.Warning);
builder.Logging.AddFilter("Microsoft.AspNetCore.DataProtection", LogLevel.Error); // its warning about unencrypted keys: they never leave memory
// YARP brings data protection (for affinity cookies, unused here), whose start-up creates a key; keeping the key ring in
// memory leaves nothing in the user's home folder.
builder.Services.Configure<KeyManagementOptions>(keys => keys.XmlRepository = new InMemoryKeyRing());
builder.Services.AddReverseProxy().LoadFromMemory(
    [new RouteConfig { RouteId = "all", ClusterId = "destination", Match = new RouteMatch { Path = "{**rest}" } }],
    [new ClusterConfig
    {
        ClusterId = "destination",
        Destinations = new Dictionary<string, DestinationConfig> { ["destination"] = new() { Address = destination.ToString() } },
    }]);

WebApplication app = builder.Build();
app.MapReverseProxy();
await app.RunAsync();
return 0;

// Load tests here target loopback only.
static Uri? LoopbackUrl(string? value, bool allowHttps) =>
    Uri.TryCreate(value, UriKind.Absolute, out Uri? url) && url.Host == "127.0.0.1"
    && (url.Scheme == Uri.UriSchemeHttp || (allowHttps && url.Scheme == Uri.UriSchemeHttps)) ? url : null;
