using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;
using Tunnel2.Balancing;
using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;

namespace Tunnel2.UnitTests.Backends;

/// <summary>The client's glue over the shared balancing library: its backends as members, affinity, each backend tried once, ejection.</summary>
public sealed class BackendSetTests : IDisposable
{
    private const string Three = "http://127.0.0.1:1, http://127.0.0.1:2, http://127.0.0.1:3";
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();
    private readonly TunnelClientMetrics _metrics;
    private readonly FakeTimeProvider _clock = new();

    public BackendSetTests() => _metrics = new TunnelClientMetrics(_services.GetRequiredService<IMeterFactory>());

    [Fact]
    public async Task With_one_backend_there_is_no_affinity_to_keep()
    {
        await using BackendSet set = Set("http://127.0.0.1:1", AffinityMode.Cookie);

        Assert.False(set.UsesAffinityCookie);
        Assert.Null(set.AffinityKeyOf(Get(new HeaderField("Cookie", "Tunnel2-Backend=abc"))));
        Assert.Same(set.All[0], set.Pick(affinityKey: null));
    }

    [Fact]
    public async Task Cookie_affinity_reads_the_callers_cookie_and_sets_one_only_for_another_backend()
    {
        await using BackendSet set = Set(Three, AffinityMode.Cookie);
        Backend named = set.All[2];
        RequestHead request = Get(new HeaderField("Cookie", "theme=dark; Tunnel2-Backend=" + named.AffinityKey));

        string? key = set.AffinityKeyOf(request);

        Assert.Equal(named.AffinityKey, key);
        for (int i = 0; i < 5; i++)
        {
            Assert.Same(named, set.Pick(key));
        }

        var same = new List<HeaderField>();
        set.SetAffinityCookie(same, request, key, named);
        Assert.Empty(same);

        var other = new List<HeaderField>();
        set.SetAffinityCookie(other, request, key, set.All[0]);
        Assert.Equal(new HeaderField("Set-Cookie", $"Tunnel2-Backend={set.All[0].AffinityKey}; Path=/; HttpOnly; SameSite=Lax"), Assert.Single(other));
    }

    [Fact]
    public async Task A_failing_request_tries_each_backend_once()
    {
        await using BackendSet set = Set(Three, AffinityMode.None);
        Backend first = set.Pick(affinityKey: null)!;
        ulong tried = 0;
        var seen = new HashSet<Backend> { first };

        Backend? next = set.PickUntried(null, first, ref tried);
        while (next is not null)
        {
            Assert.True(seen.Add(next));
            next = set.PickUntried(null, next, ref tried);
        }

        Assert.Equal(3, seen.Count);
    }

    [Fact]
    public async Task A_backend_failing_in_a_row_is_passed_over_until_its_backoff_ends()
    {
        await using BackendSet set = Set(Three, AffinityMode.None);
        Backend failing = set.All[1];
        for (int i = 0; i < BackendSet.Ejection.EjectAfter; i++)
        {
            set.ReportUnreachable(failing);
        }

        for (int i = 0; i < 30; i++)
        {
            Assert.NotSame(failing, set.Pick(affinityKey: null));
        }

        _clock.Advance(BackendSet.Ejection.Backoff);
        Assert.Contains(failing, Enumerable.Range(0, 3).Select(_ => set.Pick(affinityKey: null)));
    }

    public void Dispose()
    {
        _metrics.Dispose();
        _services.Dispose();
    }

    private BackendSet Set(string backends, AffinityMode affinity) =>
        new(Options.Create(new TunnelClientOptions { Backends = new() { Urls = backends, Affinity = affinity } }), _metrics, NullLogger<BackendSet>.Instance, _clock);

    private static RequestHead Get(params HeaderField[] headers) => new("GET", "/", [.. headers]);
}
