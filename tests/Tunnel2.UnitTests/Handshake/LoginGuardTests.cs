using System.Net;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Uplinks;

namespace Tunnel2.UnitTests.Handshake;

/// <summary>The tunnel port's per-address limits in isolation: failed logins and uplinks at once.</summary>
public sealed class LoginGuardTests
{
    private static readonly IPAddress Guesser = IPAddress.Parse("192.0.2.7");
    private static readonly IPAddress Other = IPAddress.Parse("2001:db8::1");

    private static LoginGuard Guard(int failures = 3, int uplinks = 2) =>
        new(Options.Create(new TunnelServerOptions { MaxFailedLoginsPerMinute = failures, MaxUplinksPerAddress = uplinks }));

    [Fact]
    public void An_address_is_blocked_after_its_allowance_of_failed_logins_and_only_that_address()
    {
        using LoginGuard guard = Guard(failures: 3);
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
        using LoginGuard guard = Guard(uplinks: 2);

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
        using LoginGuard guard = Guard(uplinks: 300);
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
}
