using System.Net;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.ProxyEntry.Policy;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.UnitTests.Sessions;

/// <summary>
/// A session's policy is one immutable snapshot with its visitor rules in it: rebuilt (copy-on-write, swapped whole) when
/// the credentials file reloads and when a client declares rules at login or logs in without, in the documented order
/// (the options, then the file, then the client), and read with no lock and no allocation.
/// </summary>
public sealed class PolicySnapshotTests
{
    private static readonly VisitorPolicy DenyFive = SessionPolicyTests.Policy("db", allow: [], deny: ["10.0.0.5/32"]);
    private static readonly VisitorPolicy DenySix = SessionPolicyTests.Policy("db", allow: [], deny: ["10.0.0.6/32"]);
    private static readonly VisitorPolicy OnlyTwo = SessionPolicyTests.Policy("db", allow: ["10.0.0.2/32"], deny: []);

    [Fact]
    public void A_reload_of_the_file_swaps_in_a_new_policy_and_one_read_before_it_keeps_the_rules_it_had()
    {
        SessionPolicies policies = WithOptions();
        policies.UseFileRules(new VisitorPolicies([DenyFive]));
        SessionPolicy inFlight = policies.For("db"); // what a request routed before the reload holds

        policies.UseFileRules(new VisitorPolicies([DenySix]));
        SessionPolicy after = policies.For("db");

        Assert.NotSame(inFlight, after);
        Assert.Same(DenyFive, inFlight.Visitors.FromFile);
        Assert.Same(DenySix, after.Visitors.FromFile);
        Assert.Equal(VisitorVerdict.AddressDenied, inFlight.Visitors.CheckTcpCaller(IPAddress.Parse("10.0.0.5")));
        Assert.Equal(VisitorVerdict.Allowed, after.Visitors.CheckTcpCaller(IPAddress.Parse("10.0.0.5")));
    }

    [Fact]
    public void Declared_rules_come_after_the_files_and_survive_its_reload_and_a_clear_leaves_the_files_alone()
    {
        SessionPolicies policies = WithOptions();
        policies.UseFileRules(new VisitorPolicies([DenyFive]));

        policies.Declare("db", OnlyTwo);
        Assert.Equal((DenyFive, OnlyTwo), (policies.For("db").Visitors.FromFile, policies.For("db").Visitors.Declared));

        policies.UseFileRules(new VisitorPolicies([DenySix]));
        Assert.Equal((DenySix, OnlyTwo), (policies.For("db").Visitors.FromFile, policies.For("db").Visitors.Declared));

        policies.Declare("db", null);
        Assert.Equal((DenySix, (VisitorPolicy?)null), (policies.For("db").Visitors.FromFile, policies.For("db").Visitors.Declared));

        policies.UseFileRules(VisitorPolicies.None);
        Assert.True(policies.For("db").Visitors.IsEmpty);
    }

    [Fact]
    public void The_options_part_of_a_policy_outlives_every_change_of_its_visitor_rules()
    {
        SessionPolicies policies = WithOptions();
        SessionPolicy before = policies.For("db");

        policies.UseFileRules(new VisitorPolicies([DenyFive]));
        policies.Declare("db", OnlyTwo);
        SessionPolicy after = policies.For("db");

        Assert.Equal(3, after.MaxTcpConnections); // ProxyEntry:Sessions:db, over SessionDefaults
        Assert.Same(before.Balancing, after.Balancing);
        Assert.Same(before.RateLimiter, after.RateLimiter); // the rate limiter's bucket for the session stays the one it made
        Assert.Equal(40, policies.For("other").MaxTcpConnections); // the defaults
    }

    [Fact]
    public void A_session_only_a_pattern_names_gets_its_rules_and_one_the_client_declared_for_keeps_them_under_its_own()
    {
        SessionPolicies policies = WithOptions();
        VisitorPolicy team = SessionPolicyTests.Policy("team-*", allow: [], deny: ["10.0.0.5/32"]);
        VisitorPolicy exact = SessionPolicyTests.Policy("team-x", allow: [], deny: []);
        policies.UseFileRules(new VisitorPolicies([team, exact]));

        policies.Declare("team-y", OnlyTwo);

        Assert.Same(team, policies.For("team-a").Visitors.FromFile);
        Assert.Same(policies.For("team-a"), policies.For("team-b")); // one policy made per pattern, not per session
        Assert.Same(exact, policies.For("team-x").Visitors.FromFile); // the exact entry beats the pattern
        Assert.Equal((team, OnlyTwo), (policies.For("team-y").Visitors.FromFile, policies.For("team-y").Visitors.Declared));
        Assert.Same(policies.Default, policies.For("web"));
    }

    [Fact]
    public void A_login_that_declares_nothing_for_a_session_without_declared_rules_builds_no_new_snapshot()
    {
        SessionPolicies policies = WithOptions();
        policies.UseFileRules(new VisitorPolicies([DenyFive]));
        SessionPolicy before = policies.For("db");

        policies.Declare("db", null);
        policies.Declare("web", null);

        Assert.Same(before, policies.For("db"));
    }

    [Fact]
    public void Logins_declaring_at_once_lose_none_of_each_others_rules()
    {
        SessionPolicies policies = WithOptions();
        string[] sessions = [.. Enumerable.Range(0, 64).Select(i => $"s{i}")];

        Parallel.ForEach(sessions, session => policies.Declare(session, OnlyTwo));

        Assert.All(sessions, session => Assert.Same(OnlyTwo, policies.For(session).Visitors.Declared));
    }

    [Fact]
    public void Reading_a_sessions_policy_allocates_nothing()
    {
        SessionPolicies policies = WithOptions();
        policies.UseFileRules(new VisitorPolicies([DenyFive, SessionPolicyTests.Policy("team-*", allow: [], deny: [])]));
        policies.Declare("web", OnlyTwo);
        foreach (string session in (string[])["db", "web", "team-a", "other"])
        {
            policies.For(session);
        }

        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 1000; i++)
        {
            policies.For("db");
            policies.For("web");
            policies.For("team-a");
            policies.For("other");
        }

        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }

    /// <summary>Options with an entry for <c>db</c> (a TCP cap of 3) over defaults of 40.</summary>
    private static SessionPolicies WithOptions() => new(new ProxyEntry.Balancing.BalancingOptions(),
        new SessionDefaultsOptions { MaxTcpConnections = 40, RateLimit = new TokenBucketLimit { PerSecond = 5 } },
        new Dictionary<string, SessionOptions> { ["db"] = new() { MaxTcpConnections = 3, RateLimit = new TokenBucketLimit { PerSecond = 1 } } });
}
