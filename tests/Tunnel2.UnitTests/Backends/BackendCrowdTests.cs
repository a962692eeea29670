using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Relay.Http1;

namespace Tunnel2.UnitTests.Backends;

/// <summary>A backend is crowded while more exchanges than the threshold are in flight on it, and calms as they end.</summary>
public sealed class BackendCrowdTests
{
    [Fact]
    public async Task Exchanges_in_flight_past_the_threshold_make_the_backend_crowded_until_one_ends()
    {
        var url = new Uri("http://127.0.0.1:9");
        var pool = new BackendConnectionPool(url, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(60), maxIdle: 1, unsentBytesLimit: 0, static (_, _) => { });
        await using var backend = new Backend(0, new BackendAddress(url, 1), pool, rewritePaths: false);

        for (int i = 0; i < Backend.CrowdedAbove; i++)
        {
            backend.ExchangeStarted();
        }

        Assert.False(backend.IsCrowded);
        backend.ExchangeStarted();
        Assert.True(backend.IsCrowded);
        backend.ExchangeEnded();
        Assert.False(backend.IsCrowded);
    }
}
