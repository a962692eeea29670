namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>A second node of a <see cref="LoginStack"/>'s cluster (<see cref="LoginStack.StartNodeAsync"/>): its server, and a client serving the session through it.</summary>
public sealed class LoginNode(TunnelProcess server, TunnelProcess client, Uri publicUrl) : IAsyncDisposable
{
    public Uri PublicUrl { get; } = publicUrl;

    public async ValueTask DisposeAsync()
    {
        await client.DisposeAsync();
        await server.DisposeAsync();
    }
}
