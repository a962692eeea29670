using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;

namespace Tunnel2.UnitTests.Balancing;

/// <summary>
/// The affinity policies both sides share: which value of a request is its key, which member the key leads to, and
/// when the answer carries the one affinity cookie.
/// </summary>
public sealed class AffinityPolicyTests
{
    private static readonly TestRequest Request = new(
        cookies: new() { ["t2"] = "k1" },
        headers: new() { ["X-User"] = "u7" },
        address: "192.0.2.9");

    [Fact]
    public void Each_mode_makes_its_policy_and_the_same_settings_make_equal_policies()
    {
        Assert.Equal(new CookieAffinity("t2"), AffinityPolicy.For(AffinityMode.Cookie, "X-User", "t2"));
        Assert.Equal(new HeaderAffinity("X-User"), AffinityPolicy.For(AffinityMode.Header, "X-User", "t2"));
        Assert.Same(ClientAddressAffinity.Instance, AffinityPolicy.For(AffinityMode.ClientIp, null, "t2"));
        Assert.Same(NoAffinity.Instance, AffinityPolicy.For(AffinityMode.None, "X-User", "t2"));
        Assert.Equal(AffinityMode.Header, AffinityPolicy.For(AffinityMode.Header, null, "t2").Mode);
    }

    [Fact]
    public void The_key_is_the_cookies_value_the_headers_value_the_callers_address_or_none()
    {
        Assert.Equal("k1", new CookieAffinity("t2").KeyOf(Request));
        Assert.Null(new CookieAffinity("other").KeyOf(Request));
        Assert.Equal("u7", new HeaderAffinity("X-User").KeyOf(Request));
        Assert.Null(new HeaderAffinity("X-Missing").KeyOf(Request));
        Assert.Null(new HeaderAffinity(string.Empty).KeyOf(Request)); // Header without a header name: refused at start, and no key
        Assert.Equal("192.0.2.9", ClientAddressAffinity.Instance.KeyOf(Request));
        Assert.Null(NoAffinity.Instance.KeyOf(Request));
    }

    [Fact]
    public void A_cookie_leads_to_the_member_it_names_only_while_that_member_takes_requests()
    {
        TestMember[] members = [new("a"), new("b"), new("c")];
        var policy = new CookieAffinity("t2");

        Assert.Same(members[1], policy.Find(members, members[1].AffinityKey, exclude: null, now: 0));
        Assert.Null(policy.Find(members, "not-a-member-key", exclude: null, now: 0));
        Assert.Null(policy.Find(members, members[1].AffinityKey, exclude: members[1], now: 0));
        members[1].Takes = false;
        Assert.Null(policy.Find(members, members[1].AffinityKey, exclude: null, now: 0));
    }

    [Fact]
    public void A_hashed_key_stays_on_one_member_and_moves_only_when_that_member_cannot_take_it()
    {
        TestMember[] members = [new("a"), new("b"), new("c")];
        IAffinityPolicy[] hashed = [new HeaderAffinity("X-User"), ClientAddressAffinity.Instance];
        foreach (IAffinityPolicy policy in hashed)
        {
            TestMember first = policy.Find(members, "user-1", exclude: null, now: 0)!;
            Assert.Same(first, policy.Find(members, "user-1", exclude: null, now: 0));

            first.Takes = false;
            TestMember moved = policy.Find(members, "user-1", exclude: null, now: 0)!;
            Assert.NotSame(first, moved);
            first.Takes = true;
        }

        Assert.Null(NoAffinity.Instance.Find(members, "user-1", exclude: null, now: 0));
    }

    [Fact]
    public void Only_cookie_affinity_sets_a_cookie_and_only_when_the_caller_is_not_on_the_member_already()
    {
        var member = new TestMember("a");
        var policy = new CookieAffinity("t2");

        Assert.Equal($"t2={member.AffinityKey}; Path=/; HttpOnly; SameSite=Lax", policy.CookieFor(Request, "k1", member));
        Assert.Equal($"t2={member.AffinityKey}; Path=/; HttpOnly; SameSite=Lax", policy.CookieFor(Request, null, member));
        Assert.Null(policy.CookieFor(Request, member.AffinityKey, member));
        Assert.Null(new HeaderAffinity("X-User").CookieFor(Request, null, member));
        Assert.Null(ClientAddressAffinity.Instance.CookieFor(Request, null, member));
        Assert.Null(NoAffinity.Instance.CookieFor(Request, null, member));
    }

    [Fact]
    public void The_cookie_is_scoped_to_the_requests_path_and_secure_over_TLS()
    {
        var member = new TestMember("a");
        var request = new TestRequest(cookiePath: "/session/abc/", https: true);

        Assert.Equal($"t2={member.AffinityKey}; Path=/session/abc/; HttpOnly; SameSite=Lax; Secure",
            new CookieAffinity("t2").CookieFor(request, null, member));
        Assert.Equal("n=k; Path=/; HttpOnly; SameSite=Lax", AffinityCookie.Format("n", "k", "/", secure: false));
    }

    [Fact]
    public void A_members_key_is_a_stable_hash_of_its_identity_in_16_hex_digits()
    {
        Assert.Equal(AffinityKeys.Hash("instance-1"), AffinityKeys.Hash("instance-1"));
        Assert.NotEqual(AffinityKeys.Hash("instance-1"), AffinityKeys.Hash("instance-2"));
        Assert.Matches("^[0-9a-f]{16}$", AffinityKeys.CookieValue(AffinityKeys.Hash("instance-1")));
        Assert.Equal("00000000000000ff", AffinityKeys.CookieValue(0xff));
    }

    [Fact]
    public void The_picker_follows_the_policy_and_falls_back_to_the_strategy()
    {
        TestMember[] members = [new("a"), new("b"), new("c")];
        uint cursor = 0;
        var policy = new CookieAffinity("t2");

        for (int i = 0; i < 5; i++)
        {
            Assert.Same(members[2], MemberPicker.Pick(members, [], ref cursor, BalancingStrategy.RoundRobin, policy, members[2].AffinityKey, null, 0));
        }

        Assert.Equal(0u, cursor); // the affinity's member took every request: the strategy never ran
        Assert.NotNull(MemberPicker.Pick(members, [], ref cursor, BalancingStrategy.RoundRobin, policy, "unknown", null, 0));
        Assert.Equal(1u, cursor);
    }
}
