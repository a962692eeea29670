namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>One stack with one client on <see cref="Session"/>, shared by the tests of a collection.</summary>
public sealed class TunnelStackFixture : IAsyncLifetime
{
    public const string Session = "22222222-2222-2222-2222-222222222222";

    private TunnelStack? _stack;

    public TunnelStack Stack => _stack ?? throw new InvalidOperationException("The stack is not started.");

    public HttpClient Http { get; } = new(new SocketsHttpHandler { UseCookies = false, AllowAutoRedirect = false, MaxConnectionsPerServer = 2000 })
    {
        Timeout = TimeSpan.FromMinutes(5),
    };

    public Uri Url(string pathAndQuery) => Stack.SessionUrl(Session, pathAndQuery);

    public Uri DirectUrl(string pathAndQuery) => new(Stack.BackendUrl, pathAndQuery);

    public async ValueTask InitializeAsync()
    {
        _stack = await TunnelStack.StartAsync();
        await _stack.StartClientAsync(Session);
    }

    public async ValueTask DisposeAsync()
    {
        Http.Dispose();
        if (_stack is not null)
        {
            await _stack.DisposeAsync();
        }
    }
}

[CollectionDefinition(Name)]
public sealed class TunnelCollection : ICollectionFixture<TunnelStackFixture>
{
    public const string Name = "tunnel";
}
