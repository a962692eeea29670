using System.Net;
using Microsoft.Extensions.Time.Testing;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.UnitTests.Handshake;

/// <summary>The tunnel port's per-address limits in isolation: failed logins and uplinks at once.</summary>
public sealed class AddressGuardTests
{
    private static readonly IPAddress Guesser = IPAddress.Parse("192.0.2.7");
    private static readonly IPAddress Other = IPAddress.Parse("2001:db8::1");
    private static readonly HandshakeAcceptance Login = new("s-1", null, 3, null);
    private static readonly HandshakeRefusal WrongToken = new(401, "bad-token", "Unauthorized", "A valid token is required.");
    private static readonly HandshakeRefusal NotAnUpgrade = new(426, "upgrade-required", "Upgrade required", "Send an upgrade.");

    private static AddressGuard Guard(int failures = 3, int uplinks = 2, TimeProvider? time = null) =>
        new(new FailedAttempts(failures, time), uplinks);

    [Fact]
    public void An_address_is_blocked_after_its_allowance_of_failed_logins_and_only_that_address()
    {
        using AddressGuard guard = Guard(failures: 3);
        for (int i = 0; i < 3; i++)
        {
            Assert.Equal(AttemptVerdict.Failed, guard.Judge(Guesser, failed: true, out _));
        }

        Assert.Equal(AttemptVerdict.Blocked, guard.Judge(Guesser, failed: true, out TimeSpan retryAfter));
        Assert.Equal(AttemptVerdict.Blocked, guard.Judge(Guesser, failed: false, out _)); // the right token too
        Assert.InRange(retryAfter, TimeSpan.FromMilliseconds(1), TimeSpan.FromMinutes(1));
        Assert.Equal(AttemptVerdict.Passed, guard.Judge(Other, failed: false, out _));
    }

    [Fact]
    public void Uplinks_are_counted_per_address_up_to_the_cap_and_released_when_they_end()
    {
        using AddressGuard guard = Guard(uplinks: 2);

        Assert.True(guard.TryAddUplink(Guesser));
        Assert.True(guard.TryAddUplink(Guesser));
        Assert.False(guard.TryAddUplink(Guesser));
        Assert.True(guard.TryAddUplink(Other));
        guard.RemoveUplink(Guesser);
        Assert.True(guard.TryAddUplink(Guesser));
        guard.RemoveUplink(Guesser);
        guard.RemoveUplink(Guesser);
        guard.RemoveUplink(Guesser); // one more than added: no negative count
        Assert.True(guard.TryAddUplink(Guesser));
        Assert.True(guard.TryAddUplink(Guesser));
        Assert.False(guard.TryAddUplink(Guesser));
    }

    [Fact]
    public async Task A_crowd_of_1000_logins_at_once_from_one_address_gets_exactly_the_cap_and_all_of_it_back()
    {
        using AddressGuard guard = Guard(uplinks: 300);
        using var start = new ManualResetEventSlim();

        bool[] admitted = await Task.WhenAll(Enumerable.Range(0, 1000).Select(_ => Task.Run(() =>
        {
            start.Wait();
            return guard.TryAddUplink(Guesser);
        })).Append(Task.Run(() =>
        {
            start.Set();
            return false;
        })));

        Assert.Equal(300, admitted.Count(taken => taken));
        await Task.WhenAll(Enumerable.Range(0, 300).Select(_ => Task.Run(() => guard.RemoveUplink(Guesser))));
        Assert.Equal(300, Enumerable.Range(0, 400).Count(_ => guard.TryAddUplink(Guesser))); // every slot came back, no more
    }

    [Fact]
    public void Refused_tokens_use_up_the_allowance_then_every_login_gets_429_until_time_refills_one()
    {
        var time = new FakeTimeProvider();
        using AddressGuard guard = Guard(failures: 3, uplinks: 10, time);
        for (int i = 0; i < 5; i++)
        {
            Assert.Same(NotAnUpgrade, guard.Admit(Guesser, (null, NotAnUpgrade)).Refused); // not a wrong token: not counted
        }

        for (int i = 0; i < 3; i++)
        {
            Assert.Same(WrongToken, guard.Admit(Guesser, (null, WrongToken)).Refused);
        }

        (HandshakeAcceptance? accepted, HandshakeRefusal? refused) = guard.Admit(Guesser, (Login, null));

        Assert.Null(accepted);
        Assert.Equal((429, "too-many-failed-logins"), (refused!.Status, refused.Reason));
        Assert.Contains(KeyValuePair.Create("Retry-After", "20"), refused.Headers); // 3 a minute: one back every 20 s
        Assert.Same(Login, guard.Admit(Other, (Login, null)).Accepted);

        time.Advance(TimeSpan.FromSeconds(20));
        Assert.Same(Login, guard.Admit(Guesser, (Login, null)).Accepted);
    }

    [Fact]
    public void Accepted_logins_fill_the_uplink_cap_then_get_429_with_Retry_After_5_and_a_released_place_is_taken_again()
    {
        using AddressGuard guard = Guard(failures: 3, uplinks: 2);

        Assert.Same(Login, guard.Admit(Guesser, (Login, null)).Accepted);
        Assert.Same(WrongToken, guard.Admit(Guesser, (null, WrongToken)).Refused); // a refused login takes no place
        Assert.Same(Login, guard.Admit(Guesser, (Login, null)).Accepted);
        (HandshakeAcceptance? accepted, HandshakeRefusal? refused) = guard.Admit(Guesser, (Login, null));

        Assert.Null(accepted);
        Assert.Equal((429, "too-many-uplinks"), (refused!.Status, refused.Reason));
        Assert.Contains(KeyValuePair.Create("Retry-After", "5"), refused.Headers);
        guard.RemoveUplink(Guesser);
        Assert.Same(Login, guard.Admit(Guesser, (Login, null)).Accepted);
    }
}
