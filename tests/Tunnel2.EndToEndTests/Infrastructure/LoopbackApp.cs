using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A small real Kestrel app on 127.0.0.1 (port 0), quiet, with the handlers the caller maps: what the tests' stand-in
/// backends and endpoints run on.
/// </summary>
public sealed class LoopbackApp : IAsyncDisposable
{
    private readonly WebApplication _app;

    private LoopbackApp(WebApplication app)
    {
        _app = app;
        Url = new Uri(app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First());
    }

    public Uri Url { get; }

    /// <param name="map">Adds the app's middleware and endpoints.</param>
    public static async Task<LoopbackApp> StartAsync(Action<WebApplication> map)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        WebApplication app = builder.Build();
        map(app);
        await app.StartAsync();
        return new LoopbackApp(app);
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
