using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>An established uplink and the network stream under it (and the HTTP handler that opened it, if any), closed together.</summary>
public sealed class DialedUplink(Stream network, Uplink uplink, IDisposable? handler = null) : IAsyncDisposable
{
    public Uplink Uplink { get; } = uplink;

    public async ValueTask DisposeAsync()
    {
        Uplink.Close("client closed the connection");
        await network.DisposeAsync();
        handler?.Dispose();
    }
}
