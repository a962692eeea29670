using System.IO.Pipelines;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;
using Tunnel2.Balancing;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Balancing;

/// <summary>Each strategy's distribution, affinity, and how health (reported and passive) removes and restores a member.</summary>
public sealed class MemberPickerTests
{
    private static readonly RequestHead Get = new("GET", "/", []);

    [Fact]
    public void Round_robin_gives_each_member_the_same_share_in_turn()
    {
        SessionRegistry registry = Registry(new BalancingOptions());
        Uplink[] uplinks = Register(registry, 3);

        Dictionary<Uplink, int> counts = Count(registry, 300);

        Assert.All(uplinks, uplink => Assert.Equal(100, counts[uplink]));
    }

    [Fact]
    public void Least_requests_with_two_members_always_takes_the_less_busy_one()
    {
        SessionRegistry registry = Registry(new BalancingOptions { Strategy = BalancingStrategy.LeastRequests });
        Uplink[] uplinks = Register(registry, 2);
        Open(uplinks[0], 3);

        Dictionary<Uplink, int> counts = Count(registry, 200);

        Assert.Equal(200, counts[uplinks[1]]);
    }

    [Fact]
    public void Least_requests_never_picks_the_busiest_of_three_and_favours_the_idlest()
    {
        SessionRegistry registry = Registry(new BalancingOptions { Strategy = BalancingStrategy.LeastRequests });
        Uplink[] uplinks = Register(registry, 3);
        Open(uplinks[1], 1);
        Open(uplinks[2], 5);

        Dictionary<Uplink, int> counts = Count(registry, 3000);

        // Two distinct members are drawn: the busiest never wins a draw; the idlest wins every draw it is in (2 of 3).
        Assert.Equal(0, counts.GetValueOrDefault(uplinks[2]));
        Assert.InRange(counts[uplinks[0]], 1800, 2200);
    }

    [Fact]
    public void Weighted_gives_shares_in_the_ratio_of_the_weights_spread_smoothly()
    {
        SessionRegistry registry = Registry(new BalancingOptions { Strategy = BalancingStrategy.Weighted });
        Uplink a = NewUplink(), b = NewUplink(), c = NewUplink();
        registry.Register("s", a, "a", weight: 5);
        registry.Register("s", b, "b", weight: 1);
        registry.Register("s", c, "c", weight: 1);

        var order = new List<Uplink>();
        for (int i = 0; i < 70; i++)
        {
            order.Add(registry.Pick("s")!);
        }

        Assert.Equal(50, order.Count(u => u == a));
        Assert.Equal(10, order.Count(u => u == b));
        Assert.Equal(10, order.Count(u => u == c));

        // Smooth: a's turns are broken up by b and c (a a b a c a a, repeated: at most four in a row across the seam),
        // where a plain expansion (a a a a a b c) gives five.
        int run = 0, longest = 0;
        foreach (Uplink picked in order)
        {
            run = picked == a ? run + 1 : 0;
            longest = Math.Max(longest, run);
        }

        Assert.Equal(4, longest);
    }

    [Fact]
    public void The_weighted_schedule_of_5_1_1_is_nginx_smooth_order()
    {
        SessionMember[] members = [Member(weight: 5), Member(weight: 1), Member(weight: 1)];

        Assert.Equal([0, 0, 1, 0, 2, 0, 0], WeightedSchedule.Build(members));
    }

    [Fact]
    public void Cookie_affinity_picks_the_named_member_and_falls_back_to_the_strategy_when_it_cannot_take_requests()
    {
        SessionRegistry registry = Registry(new BalancingOptions { Affinity = AffinityMode.Cookie });
        Register(registry, 3);
        SessionMember named = registry.GetMembers("s")[1];

        for (int i = 0; i < 10; i++)
        {
            Assert.Same(named, registry.Pick("s", new PickContext(named.AffinityKey), out PickStatus status));
            Assert.Equal(PickStatus.Picked, status);
        }

        named.Uplink.Close("gone");
        SessionMember? other = registry.Pick("s", new PickContext(named.AffinityKey), out _);
        Assert.NotNull(other);
        Assert.NotSame(named, other);
        Assert.NotNull(registry.Pick("s", new PickContext("not-a-member-key"), out _));
    }

    [Fact]
    public void A_client_keeps_its_affinity_key_when_it_logs_in_again_with_the_same_instance_id()
    {
        Assert.Equal(new SessionMember(NewUplink(), "instance-1", 1).AffinityKey, new SessionMember(NewUplink(), "instance-1", 1).AffinityKey);
        Assert.NotEqual(new SessionMember(NewUplink(), "instance-1", 1).AffinityKey, new SessionMember(NewUplink(), "instance-2", 1).AffinityKey);
    }

    [Fact]
    public void Hash_affinity_keeps_a_key_on_one_member_and_spreads_keys_evenly()
    {
        SessionRegistry registry = Registry(new BalancingOptions { Affinity = AffinityMode.Header, AffinityHeader = "X-User" });
        Uplink[] uplinks = Register(registry, 3);

        var counts = new Dictionary<Uplink, int>();
        for (int key = 0; key < 9000; key++)
        {
            Uplink first = registry.Pick("s", new PickContext($"user-{key}"), out _)!.Uplink;
            Assert.Same(first, registry.Pick("s", new PickContext($"user-{key}"), out _)!.Uplink);
            counts[first] = counts.GetValueOrDefault(first) + 1;
        }

        Assert.All(uplinks, uplink => Assert.InRange(counts[uplink], 2700, 3300));
    }

    [Fact]
    public void Hash_affinity_moves_only_the_keys_of_a_member_that_leaves()
    {
        SessionRegistry registry = Registry(new BalancingOptions { Affinity = AffinityMode.ClientIp });
        Uplink[] uplinks = Register(registry, 4);
        var before = new Dictionary<string, Uplink>();
        for (int key = 0; key < 2000; key++)
        {
            before[$"10.0.{key / 256}.{key % 256}"] = registry.Pick("s", new PickContext($"10.0.{key / 256}.{key % 256}"), out _)!.Uplink;
        }

        registry.Unregister("s", uplinks[2]);

        int moved = 0;
        foreach ((string key, Uplink owner) in before)
        {
            Uplink now = registry.Pick("s", new PickContext(key), out _)!.Uplink;
            if (owner != uplinks[2])
            {
                Assert.Same(owner, now);
            }
            else
            {
                moved++;
                Assert.NotSame(uplinks[2], now);
            }
        }

        Assert.InRange(moved, 350, 650); // about a quarter of the keys were the leaving member's
    }

    [Theory]
    [InlineData(BalancingStrategy.RoundRobin)]
    [InlineData(BalancingStrategy.LeastRequests)]
    [InlineData(BalancingStrategy.Weighted)]
    public void An_unready_member_is_never_picked(BalancingStrategy strategy)
    {
        SessionRegistry registry = Registry(new BalancingOptions { Strategy = strategy });
        Uplink ready = NewUplink();
        Uplink unready = NewUplink(peerReady: false);
        registry.Register("s", ready, "r");
        registry.Register("s", unready, "u");

        Assert.Equal(200, Count(registry, 200)[ready]);
    }

    [Fact]
    public void A_session_whose_every_member_is_unready_reports_none_ready()
    {
        SessionRegistry registry = Registry(new BalancingOptions());
        registry.Register("s", NewUplink(peerReady: false), "a");
        registry.Register("s", NewUplink(peerReady: false), "b");

        Assert.Null(registry.Pick("s", PickContext.None, out PickStatus status));
        Assert.Equal(PickStatus.NoneReady, status);
        Assert.Null(registry.Pick("other", PickContext.None, out PickStatus unknown));
        Assert.Equal(PickStatus.NoClient, unknown);
    }

    [Fact]
    public void The_excluded_member_is_not_picked_and_alone_it_leaves_no_client()
    {
        SessionRegistry registry = Registry(new BalancingOptions());
        Register(registry, 2);
        SessionMember excluded = registry.GetMembers("s")[0];

        for (int i = 0; i < 10; i++)
        {
            Assert.NotSame(excluded, registry.Pick("s", new PickContext(Exclude: excluded), out _));
        }

        registry.Unregister("s", registry.GetMembers("s")[1].Uplink);
        Assert.Null(registry.Pick("s", new PickContext(Exclude: excluded), out PickStatus status));
        Assert.Equal(PickStatus.NoClient, status);
    }

    [Fact]
    public void A_member_at_its_stream_limit_is_returned_only_when_every_ready_member_is_full()
    {
        var settings = new UplinkSettings { MaxConcurrentStreams = 1 };
        SessionRegistry registry = Registry(new BalancingOptions());
        Uplink full = NewUplink(settings: settings);
        Uplink free = NewUplink(settings: settings);
        registry.Register("s", full, "f");
        registry.Register("s", free, "g");
        Open(full, 1);

        Assert.Equal(50, Count(registry, 50)[free]);

        Open(free, 1);
        Assert.NotNull(registry.Pick("s", PickContext.None, out PickStatus status));
        Assert.Equal(PickStatus.AllFull, status);
    }

    [Fact]
    public void Passive_ejection_after_n_failures_in_a_row_with_a_doubling_backoff_reset_by_an_answer()
    {
        var clock = new FakeTimeProvider();
        var options = new BalancingOptions { EjectAfter = 3, EjectionBackoff = TimeSpan.FromSeconds(1), MaxEjectionBackoff = TimeSpan.FromSeconds(3) };
        var registry = new SessionRegistry(options, clock);
        Register(registry, 2);
        SessionMember failing = registry.GetMembers("s")[0];

        Assert.False(Fail(failing, registry, out _));
        Assert.False(Fail(failing, registry, out _));
        Assert.True(Fail(failing, registry, out TimeSpan first));
        Assert.Equal(TimeSpan.FromSeconds(1), first);
        Assert.False(failing.IsReady(clock.GetTimestamp()));
        Assert.Equal(20, Count(registry, 20).GetValueOrDefault(registry.GetMembers("s")[1].Uplink));

        clock.Advance(TimeSpan.FromSeconds(1));
        Assert.True(failing.IsReady(clock.GetTimestamp()));
        Assert.True(Fail(failing, registry, out TimeSpan second)); // still failing: out again at once, for longer
        Assert.Equal(TimeSpan.FromSeconds(2), second);
        clock.Advance(TimeSpan.FromSeconds(2));
        Assert.True(Fail(failing, registry, out TimeSpan third));
        Assert.Equal(TimeSpan.FromSeconds(3), third); // capped

        clock.Advance(TimeSpan.FromSeconds(3));
        failing.OnAnswered();
        Assert.False(Fail(failing, registry, out _)); // the run and the backoff start over
        Assert.False(Fail(failing, registry, out _));
        Assert.True(Fail(failing, registry, out TimeSpan afresh));
        Assert.Equal(TimeSpan.FromSeconds(1), afresh);
    }

    [Fact]
    public void Passive_ejection_is_off_at_zero()
    {
        var options = new BalancingOptions { EjectAfter = 0 };
        var registry = new SessionRegistry(options, TimeProvider.System);
        Register(registry, 1);
        SessionMember member = registry.GetMembers("s")[0];

        for (int i = 0; i < 100; i++)
        {
            Assert.False(Fail(member, registry, out _));
        }

        Assert.True(member.IsReady(TimeProvider.System.GetTimestamp()));
    }

    [Fact]
    public void Per_session_overrides_take_their_own_strategy_and_keep_the_defaults_for_the_rest()
    {
        var options = new BalancingOptions { Affinity = AffinityMode.Cookie };
        var policies = new SessionPolicies(options, new SessionDefaultsOptions(),
            new Dictionary<string, SessionOptions> { ["shop"] = new() { Strategy = BalancingStrategy.LeastRequests } });

        // The registry resolves them once: the same policy object on every request.
        var registry = new SessionRegistry(options, TimeProvider.System, policies);
        Assert.Equal(new BalancingPolicy(BalancingStrategy.LeastRequests, AffinityMode.Cookie, null, "Tunnel2-Affinity"), registry.PolicyFor("shop"));
        Assert.Equal(new BalancingPolicy(BalancingStrategy.RoundRobin, AffinityMode.Cookie, null, "Tunnel2-Affinity"), registry.PolicyFor("other"));
        Assert.Same(registry.PolicyFor("shop"), registry.PolicyFor("shop"));
        Assert.Same(registry.PolicyFor("other"), registry.PolicyFor("another"));
    }

    private static bool Fail(SessionMember member, SessionRegistry registry, out TimeSpan backoff) =>
        registry.ReportUnreachable(member, out backoff);

    private static SessionRegistry Registry(BalancingOptions options) => new(options, TimeProvider.System);

    private static Uplink[] Register(SessionRegistry registry, int count)
    {
        var uplinks = new Uplink[count];
        for (int i = 0; i < count; i++)
        {
            uplinks[i] = NewUplink();
            registry.Register("s", uplinks[i], $"instance-{i}");
        }

        return uplinks;
    }

    private static Dictionary<Uplink, int> Count(SessionRegistry registry, int picks)
    {
        var counts = new Dictionary<Uplink, int>();
        for (int i = 0; i < picks; i++)
        {
            Uplink picked = registry.Pick("s")!;
            counts[picked] = counts.GetValueOrDefault(picked) + 1;
        }

        return counts;
    }

    private static void Open(Uplink uplink, int streams)
    {
        for (int i = 0; i < streams; i++)
        {
            uplink.OpenStreamOrFail(Get, endStream: true);
        }
    }

    private static SessionMember Member(int weight) => new(NewUplink(), instanceId: null, weight);

    /// <summary>An uplink over in-memory pipes; it need not run for the registry.</summary>
    private static Uplink NewUplink(bool peerReady = true, UplinkSettings? settings = null) =>
        new(new DuplexPipe(new Pipe().Reader, new Pipe().Writer), settings ?? new UplinkSettings(), UplinkRole.Server, NullLogger.Instance)
        {
            PeerReady = peerReady,
        };
}
