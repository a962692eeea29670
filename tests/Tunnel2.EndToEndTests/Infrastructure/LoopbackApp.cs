using Microsoft.AspNetCore.Builder;
using Tunnel2.Hosting;
using Tunnel2.Hosting.Admin;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A small real Kestrel app on 127.0.0.1 (port 0), quiet, with the handlers the caller maps: what the tests' stand-in
/// backends and endpoints run on (started as the client's own listeners are, by <see cref="AdminHost"/>).
/// </summary>
public sealed class LoopbackApp : IAsyncDisposable
{
    private readonly WebApplication _app;

    private LoopbackApp(WebApplication app, Uri url)
    {
        _app = app;
        Url = url;
    }

    public Uri Url { get; }

    /// <param name="map">Adds the app's middleware and endpoints.</param>
    public static async Task<LoopbackApp> StartAsync(Action<WebApplication> map)
    {
        if (!ListenAddress.TryParse("http://127.0.0.1:0", out ListenAddress? loopback, out string? error))
        {
            throw new InvalidOperationException(error);
        }

        (WebApplication app, Uri url) = await AdminHost.StartAsync(loopback, map, CancellationToken.None);
        return new LoopbackApp(app, url);
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
