using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;

namespace Tunnel2.TestBackend.Tests.Infrastructure;

/// <summary>The real TestBackend started in-process on 127.0.0.1, port 0, with an HttpClient pointed at it.</summary>
public sealed class RunningBackend : IAsyncDisposable
{
    private RunningBackend(WebApplication app, Uri baseAddress)
    {
        App = app;
        BaseAddress = baseAddress;
        Client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, UseCookies = false })
        {
            BaseAddress = baseAddress,

            // Each test bounds its own calls with a cancellation token.
            Timeout = Timeout.InfiniteTimeSpan,
        };
    }

    public WebApplication App { get; }

    public Uri BaseAddress { get; }

    public HttpClient Client { get; }

    public IServiceProvider Services => App.Services;

    public static async Task<RunningBackend> StartAsync(CancellationToken cancellationToken, params string[] extraArgs)
    {
        string[] args =
        [
            "--urls", "http://127.0.0.1:0",
            "--Serilog:MinimumLevel:Default=Warning",
            "--Serilog:MinimumLevel:Override:Microsoft.Hosting.Lifetime=Warning",
            .. extraArgs,
        ];
        var app = TestBackendApp.Create(args);
        await app.StartAsync(cancellationToken);
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
        return new RunningBackend(app, new Uri(address + "/"));
    }

    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        await App.StopAsync();
        await App.DisposeAsync();
    }
}
