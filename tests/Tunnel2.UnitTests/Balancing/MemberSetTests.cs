using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;
using Tunnel2.Balancing.Health;

namespace Tunnel2.UnitTests.Balancing;

/// <summary>The one member set the server's clients (HTTP and TCP) and a client's backends share: pick, weights, ejection, publish.</summary>
public sealed class MemberSetTests
{
    private const long Frequency = 1_000;

    [Fact]
    public void Round_robin_picks_each_member_in_turn()
    {
        var set = new MemberSet<TestMember>(BalancingStrategy.RoundRobin, [new("a"), new("b"), new("c")]);

        string picks = Picks(set, 6);

        Assert.Equal(2, picks.Count(c => c == 'a'));
        Assert.Equal(2, picks.Count(c => c == 'b'));
        Assert.Equal(2, picks.Count(c => c == 'c'));
        Assert.Equal(picks[..3], picks[3..]); // the same order each round
    }

    [Fact]
    public void Weighted_picks_each_member_as_often_as_its_weight()
    {
        var set = new MemberSet<TestMember>(BalancingStrategy.Weighted, [new("a", weight: 5), new("b"), new("c")]);

        string picks = Picks(set, 70);

        Assert.Equal(50, picks.Count(c => c == 'a'));
        Assert.Equal(10, picks.Count(c => c == 'b'));
        Assert.Equal(10, picks.Count(c => c == 'c'));
    }

    [Fact]
    public void Adding_a_member_publishes_a_new_snapshot_and_schedule_and_leaves_the_old_snapshot_as_it_was()
    {
        var set = new MemberSet<TestMember>(BalancingStrategy.Weighted, [new("a")]);
        TestMember[] before = set.Snapshot;

        set.Add(new TestMember("b", weight: 3));

        Assert.Single(before);
        Assert.Equal(["a", "b"], set.Snapshot.Select(member => member.Name));
        string picks = Picks(set, 40);
        Assert.Equal(10, picks.Count(c => c == 'a'));
        Assert.Equal(30, picks.Count(c => c == 'b'));
    }

    [Fact]
    public void Removing_a_member_stops_its_picks_and_says_how_many_remain()
    {
        TestMember a = new("a"), b = new("b");
        var set = new MemberSet<TestMember>(BalancingStrategy.Weighted, [a, b]);

        Assert.Equal(1, set.Remove(a));
        Assert.Equal(1, set.Remove(a)); // not there any more: nothing changes

        Assert.Equal(new string('b', 10), Picks(set, 10));
        Assert.Equal(0, set.Remove(b));
        Assert.Null(set.Pick(NoAffinity.Instance, null, null, 0));
    }

    [Fact]
    public void A_member_that_cannot_take_and_the_excluded_one_are_passed_over()
    {
        TestMember a = new("a"), b = new("b"), c = new("c") { Takes = false };
        var set = new MemberSet<TestMember>(BalancingStrategy.RoundRobin, [a, b, c]);

        for (int i = 0; i < 10; i++)
        {
            Assert.Same(b, set.Pick(NoAffinity.Instance, null, exclude: a, 0));
        }

        TestMember? next = set.NextInTurn(exclude: a); // in turn whether it takes or not: the last resort
        Assert.True(next == b || next == c);
    }

    [Fact]
    public void An_ejected_member_is_passed_over_until_its_backoff_ends()
    {
        var options = new EjectionOptions(EjectAfter: 2, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(4));
        EjectableMember a = new("a"), b = new("b");
        var set = new MemberSet<EjectableMember>(BalancingStrategy.RoundRobin, [a, b]);

        Assert.False(a.Ejection.OnUnreachable(0, Frequency, options, out _));
        Assert.True(a.Ejection.OnUnreachable(0, Frequency, options, out TimeSpan ejectedFor));
        Assert.Equal(TimeSpan.FromSeconds(1), ejectedFor);

        for (int i = 0; i < 10; i++)
        {
            Assert.Same(b, set.Pick(NoAffinity.Instance, null, null, now: 999));
        }

        Assert.Contains(a, Enumerable.Range(0, 4).Select(_ => set.Pick(NoAffinity.Instance, null, null, now: 1_000)));
    }

    [Fact]
    public void The_ejection_settings_say_what_is_wrong_with_them()
    {
        Assert.Null(EjectionOptions.Default.Problem);
        Assert.Contains("MaxEjectionBackoff", new EjectionOptions(3, TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(1)).Problem, StringComparison.Ordinal);
        Assert.Contains("EjectAfter", new EjectionOptions(-1, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1)).Problem, StringComparison.Ordinal);
    }

    private static string Picks(MemberSet<TestMember> set, int count)
    {
        var picks = new char[count];
        for (int i = 0; i < count; i++)
        {
            picks[i] = set.Pick(NoAffinity.Instance, null, null, 0)!.Name[0];
        }

        return new string(picks);
    }

    private sealed class EjectableMember(string name) : IBalancingMember
    {
        public PassiveEjection Ejection { get; } = new();

        public int Weight => 1;

        public int Outstanding => 0;

        public ulong KeyHash { get; } = AffinityKeys.Hash(name);

        public string AffinityKey => AffinityKeys.CookieValue(KeyHash);

        public bool CanTake(long now) => !Ejection.IsEjected(now);
    }
}
