namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>A session served by a real client whose backend is a <see cref="MisbehavingBackend"/>: what the hostile-input tests send through.</summary>
public sealed class MisbehavingSession : IAsyncDisposable
{
    private MisbehavingSession(MisbehavingBackend backend, TunnelClientHandle client)
    {
        Backend = backend;
        Client = client;
    }

    public MisbehavingBackend Backend { get; }

    public TunnelClientHandle Client { get; }

    public static async Task<MisbehavingSession> StartAsync(TunnelStack stack, string session)
    {
        MisbehavingBackend backend = MisbehavingBackend.Start();
        try
        {
            return new MisbehavingSession(backend, await stack.StartClientAsync(session, backend.Url));
        }
        catch
        {
            await backend.DisposeAsync();
            throw;
        }
    }

    public async ValueTask DisposeAsync()
    {
        await Client.DisposeAsync();
        await Backend.DisposeAsync();
    }
}
