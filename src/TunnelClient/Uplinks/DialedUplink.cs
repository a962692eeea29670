using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>An established uplink and the network stream under it, closed together.</summary>
public sealed class DialedUplink(Stream network, Uplink uplink) : IAsyncDisposable
{
    public Uplink Uplink { get; } = uplink;

    public async ValueTask DisposeAsync()
    {
        Uplink.Close("client closed the connection");
        await network.DisposeAsync();
    }
}
