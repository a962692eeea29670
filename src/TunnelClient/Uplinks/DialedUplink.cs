using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>An established uplink and the network stream under it (and the HTTP handler that opened it, if any), closed together.</summary>
/// <param name="publicUrl">Where callers reach the session, as the server said (<c>Tunnel2-Public-Url</c>); null from an older server.</param>
public sealed class DialedUplink(Stream network, Uplink uplink, IDisposable? handler = null, string? publicUrl = null) : IAsyncDisposable
{
    public Uplink Uplink { get; } = uplink;

    public string? PublicUrl { get; } = publicUrl;

    /// <summary>Where callers reach the session's TCP port (<c>Tunnel2-Tcp-Address</c>), when the client carries TCP.</summary>
    public string? TcpAddress { get; init; }

    public async ValueTask DisposeAsync()
    {
        Uplink.Close("client closed the connection");
        await network.DisposeAsync();
        handler?.Dispose();
        Uplink.Dispose();
    }
}
