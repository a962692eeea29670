using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Forwarding;

public sealed class NodeWarmUpTests
{
    private static NodeWarmUp WarmUp(TimeSpan duration) => new(Options.Create(new ProxyEntryOptions { WarmUp = duration }));

    [Fact]
    public void Without_a_warm_up_a_node_is_ready_even_before_it_starts()
    {
        NodeWarmUp warmUp = WarmUp(TimeSpan.Zero);

        Assert.False(warmUp.IsWarmingUp);
        warmUp.Begin();
        Assert.False(warmUp.IsWarmingUp);
    }

    [Fact]
    public async Task With_a_warm_up_a_node_warms_up_from_before_its_start_until_the_time_after_it_has_passed()
    {
        NodeWarmUp warmUp = WarmUp(TimeSpan.FromMilliseconds(200));
        Assert.True(warmUp.IsWarmingUp); // not listening yet

        warmUp.Begin();
        long begun = Environment.TickCount64;
        Assert.True(warmUp.IsWarmingUp);

        Assert.True(await Eventually.TryWaitAsync(() => !warmUp.IsWarmingUp, TestTimeouts.Default));
        Assert.True(Environment.TickCount64 - begun >= 200);
        warmUp.Begin(); // a second call does not start it over
        Assert.False(warmUp.IsWarmingUp);
    }
}
