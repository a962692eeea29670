[assembly: AssemblyFixture(typeof(Tunnel2.TestBackend.Tests.Infrastructure.BackendFixture))]

namespace Tunnel2.TestBackend.Tests.Infrastructure;

/// <summary>One backend shared by the whole assembly; tests that watch counters start their own.</summary>
public sealed class BackendFixture : IAsyncLifetime
{
    private RunningBackend? _backend;

    public RunningBackend Backend => _backend ?? throw new InvalidOperationException("The backend has not started.");

    public HttpClient Client => Backend.Client;

    public async ValueTask InitializeAsync() => _backend = await RunningBackend.StartAsync(CancellationToken.None);

    public async ValueTask DisposeAsync()
    {
        if (_backend is not null)
        {
            await _backend.DisposeAsync();
        }
    }
}
