using System.IO.Pipelines;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.UnitTests.Sessions;

public sealed class SessionRegistryTests
{
    private static readonly RequestHead Get = new("GET", "/", []);

    /// <summary>An uplink over in-memory pipes; it need not run for the registry.</summary>
    private static Uplink NewUplink(string name, UplinkSettings? settings = null) =>
        new(new DuplexPipe(new Pipe().Reader, new Pipe().Writer), settings ?? new UplinkSettings(), UplinkRole.Server, NullLogger.Instance, name: name);

    [Fact]
    public void A_registered_uplink_is_picked_for_its_session_only()
    {
        var registry = new SessionRegistry();
        Uplink uplink = NewUplink("a");

        registry.Register("abc", uplink);

        Assert.Same(uplink, registry.Pick("abc"));
        Assert.Null(registry.Pick("abd"));
        Assert.Null(registry.Pick("ABC"));
        Assert.Null(registry.Pick(""));
        Assert.Equal(1, registry.SessionCount);
        Assert.Equal([uplink], registry.GetUplinks("abc"));
    }

    [Fact]
    public void Pick_takes_a_span_cut_out_of_a_larger_string()
    {
        var registry = new SessionRegistry();
        Uplink uplink = NewUplink("a");
        registry.Register("abc", uplink);
        const string target = "/session/abc/loadtest/get";

        Assert.Same(uplink, registry.Pick(target.AsSpan(9, 3)));
        Assert.Null(registry.Pick(target.AsSpan(9, 2)));
    }

    [Fact]
    public void An_unknown_session_picks_nothing()
    {
        var registry = new SessionRegistry();

        Assert.Null(registry.Pick("nobody"));
        Assert.Empty(registry.GetUplinks("nobody"));
        Assert.Equal(0, registry.SessionCount);
    }

    [Fact]
    public void The_session_goes_away_with_its_last_uplink()
    {
        var registry = new SessionRegistry();
        Uplink first = NewUplink("1");
        Uplink second = NewUplink("2");
        registry.Register("s", first);
        registry.Register("s", second);

        registry.Unregister("s", first);
        Assert.Equal(1, registry.SessionCount);
        Assert.Same(second, registry.Pick("s"));

        registry.Unregister("s", second);
        Assert.Equal(0, registry.SessionCount);
        Assert.Null(registry.Pick("s"));
        Assert.Empty(registry.GetUplinks("s"));
    }

    [Fact]
    public void Unregistering_what_is_not_there_changes_nothing()
    {
        var registry = new SessionRegistry();
        Uplink member = NewUplink("member");
        registry.Register("s", member);

        registry.Unregister("s", NewUplink("stranger"));
        registry.Unregister("other", member);

        Assert.Equal(1, registry.SessionCount);
        Assert.Same(member, registry.Pick("s"));
    }

    [Fact]
    public void Sessions_are_independent()
    {
        var registry = new SessionRegistry();
        Uplink a = NewUplink("a");
        Uplink b = NewUplink("b");
        registry.Register("one", a);
        registry.Register("two", b);

        Assert.Same(a, registry.Pick("one"));
        Assert.Same(b, registry.Pick("two"));
        Assert.Equal(2, registry.SessionCount);
        Assert.Equal(2, registry.GetAllUplinks().Count);
        Assert.Contains(a, registry.GetAllUplinks());
        Assert.Contains(b, registry.GetAllUplinks());
    }

    [Fact]
    public void Round_robin_over_three_uplinks_is_exactly_even_and_cyclic()
    {
        var registry = new SessionRegistry();
        Uplink[] uplinks = [NewUplink("1"), NewUplink("2"), NewUplink("3")];
        foreach (Uplink uplink in uplinks)
        {
            registry.Register("s", uplink);
        }

        var picks = new List<Uplink>();
        for (int i = 0; i < 30; i++)
        {
            picks.Add(registry.Pick("s")!);
        }

        foreach (Uplink uplink in uplinks)
        {
            Assert.Equal(10, picks.Count(p => p == uplink));
        }

        for (int i = 3; i < picks.Count; i++)
        {
            Assert.Same(picks[i - 3], picks[i]);
            Assert.NotSame(picks[i - 1], picks[i]);
        }
    }

    [Fact]
    public void Round_robin_is_even_under_concurrent_picks()
    {
        var registry = new SessionRegistry();
        Uplink[] uplinks = [NewUplink("1"), NewUplink("2"), NewUplink("3")];
        foreach (Uplink uplink in uplinks)
        {
            registry.Register("s", uplink);
        }

        var counts = new System.Collections.Concurrent.ConcurrentDictionary<Uplink, int>();
        Parallel.For(0, 3000, _ => counts.AddOrUpdate(registry.Pick("s")!, 1, (_, n) => n + 1));

        Assert.All(uplinks, u => Assert.Equal(1000, counts[u]));
    }

    [Fact]
    public void A_replica_at_its_stream_limit_is_passed_over_and_only_picked_when_every_replica_is_full()
    {
        var registry = new SessionRegistry();
        var oneStream = new UplinkSettings { MaxConcurrentStreams = 1 };
        Uplink full = NewUplink("full", oneStream);
        Uplink roomy = NewUplink("roomy", oneStream);
        registry.Register("s", full);
        registry.Register("s", roomy);
        Assert.Equal(StreamOpenStatus.Opened, full.TryOpenStream(Get, endStream: true, out _));

        Assert.All(Enumerable.Range(0, 10), _ => Assert.Same(roomy, registry.Pick("s")));

        Assert.Equal(StreamOpenStatus.Opened, roomy.TryOpenStream(Get, endStream: true, out _));
        Uplink? picked = registry.Pick("s");
        Assert.NotNull(picked);
        Assert.Equal(StreamOpenStatus.AtStreamLimit, picked.TryOpenStream(Get, endStream: true, out IHttpExchange? refused));
        Assert.Null(refused);
    }

    [Fact]
    public void Closed_uplinks_are_skipped()
    {
        var registry = new SessionRegistry();
        Uplink live1 = NewUplink("live1");
        Uplink closed = NewUplink("closed");
        Uplink live2 = NewUplink("live2");
        registry.Register("s", live1);
        registry.Register("s", closed);
        registry.Register("s", live2);

        closed.Close("gone");
        List<Uplink> picks = Enumerable.Range(0, 30).Select(_ => registry.Pick("s")!).ToList();

        Assert.DoesNotContain(closed, picks);
        Assert.InRange(picks.Count(p => p == live1), 10, 20);
        Assert.InRange(picks.Count(p => p == live2), 10, 20);
        Assert.Equal(30, picks.Count(p => p is not null));
    }

    [Fact]
    public void Draining_uplinks_are_skipped()
    {
        var registry = new SessionRegistry();
        Uplink draining = NewUplink("draining");
        Uplink live = NewUplink("live");
        registry.Register("s", draining);
        registry.Register("s", live);

        draining.BeginDrain();

        for (int i = 0; i < 10; i++)
        {
            Assert.Same(live, registry.Pick("s"));
        }
    }

    [Fact]
    public void Concurrent_picks_always_find_the_live_replica_while_the_other_drains()
    {
        var registry = new SessionRegistry();
        Uplink draining = NewUplink("draining");
        Uplink live = NewUplink("live");
        registry.Register("s", draining);
        registry.Register("s", live);
        draining.BeginDrain();

        int missed = 0;
        Parallel.For(0, 200_000, new ParallelOptions { MaxDegreeOfParallelism = 8 }, _ =>
        {
            if (!ReferenceEquals(registry.Pick("s"), live))
            {
                Interlocked.Increment(ref missed);
            }
        });

        Assert.Equal(0, missed);
    }

    [Fact]
    public void No_live_uplink_picks_null()
    {
        var registry = new SessionRegistry();
        Uplink closed = NewUplink("closed");
        Uplink draining = NewUplink("draining");
        registry.Register("s", closed);
        registry.Register("s", draining);

        closed.Close("gone");
        draining.BeginDrain();

        Assert.Null(registry.Pick("s"));
        Assert.Equal(2, registry.GetUplinks("s").Count);
    }

    [Fact]
    public void A_single_closed_uplink_picks_null()
    {
        var registry = new SessionRegistry();
        Uplink only = NewUplink("only");
        registry.Register("s", only);

        only.Close("gone");

        Assert.Null(registry.Pick("s"));
    }

    [Fact]
    public void GetUplinks_is_a_snapshot()
    {
        var registry = new SessionRegistry();
        Uplink first = NewUplink("1");
        registry.Register("s", first);

        IReadOnlyList<Uplink> before = registry.GetUplinks("s");
        registry.Register("s", NewUplink("2"));

        Assert.Single(before);
        Assert.Equal(2, registry.GetUplinks("s").Count);
    }
}
