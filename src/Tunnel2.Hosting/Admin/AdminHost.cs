using System.Reflection;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Tunnel2.Hosting.Admin;

/// <summary>
/// A small Kestrel host of its own for a listener of a process that has no web server otherwise (the client's admin
/// listener and request inspector), and the pages they serve from the binary.
/// </summary>
public static class AdminHost
{
    /// <summary>Starts a quiet host on <paramref name="address"/> with what <paramref name="map"/> adds; returns it and the URL it bound.</summary>
    public static async Task<(WebApplication App, Uri Url)> StartAsync(ListenAddress address, Action<WebApplication> map, CancellationToken cancellationToken)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(address.EndPoint));
        WebApplication app = builder.Build();
        map(app);
        await app.StartAsync(cancellationToken);
        return (app, new Uri(app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First()));
    }

    /// <summary>A page built into <paramref name="assembly"/> as the embedded resource <paramref name="name"/>.</summary>
    public static byte[] EmbeddedPage(Assembly assembly, string name)
    {
        using Stream stream = assembly.GetManifestResourceStream(name)
                              ?? throw new InvalidOperationException($"The page {name} is missing from the build.");
        using var copy = new MemoryStream();
        stream.CopyTo(copy);
        return copy.ToArray();
    }
}
