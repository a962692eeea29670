using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Time.Testing;
using Tunnel2.TunnelClient.Relay.OnLoop;
using Tunnel2.UnitTests.Loops;

namespace Tunnel2.UnitTests.Relay.OnLoop;

/// <summary>
/// The backend's name, for connections on the client's loops: resolved off the loop, kept for a while, and asked again
/// once that time is up or when no address it gave could be connected (a backend that moved is found again).
/// </summary>
public sealed class LoopBackendDialerTests : IDisposable
{
    private readonly LoopHarness _harness = new("client-loop-test");
    private readonly Socket _listener = LoopHarness.Listening();
    private readonly List<IPAddress[]> _answers = [];
    private int _resolved;

    private int Port => ((IPEndPoint)_listener.LocalEndPoint!).Port;

    public void Dispose()
    {
        _listener.Dispose();
        _harness.Dispose();
    }

    [Fact]
    public async Task AConnectThatFailsOnEveryAddressMakesTheNextOneResolveTheNameAgain()
    {
        _answers.Add([IPAddress.Parse("127.0.0.2")]); // nothing listens there: refused
        _answers.Add([IPAddress.Loopback]);
        LoopBackendDialer dialer = Dialer(new FakeTimeProvider());

        await Assert.ThrowsAsync<SocketException>(() => dialer.ConnectAsync(static _ => { }, CancellationToken.None).WaitAsync(LoopHarness.Timeout));
        await using LoopSocketStream stream = await ConnectAsync(dialer);

        Assert.Equal(2, _resolved);
        Assert.Empty(_harness.Faults);
    }

    [Fact]
    public async Task AddressesAreKeptForTheirLifetimeAndResolvedAgainAfterIt()
    {
        _answers.Add([IPAddress.Loopback]);
        _answers.Add([IPAddress.Loopback]);
        var time = new FakeTimeProvider();
        LoopBackendDialer dialer = Dialer(time);

        await using (await ConnectAsync(dialer))
        {
        }

        time.Advance(LoopBackendDialer.AddressLifetime - TimeSpan.FromSeconds(1));
        await using (await ConnectAsync(dialer))
        {
        }

        Assert.Equal(1, _resolved);
        time.Advance(TimeSpan.FromSeconds(2));
        await using (await ConnectAsync(dialer))
        {
        }

        Assert.Equal(2, _resolved);
    }

    private LoopBackendDialer Dialer(TimeProvider time) =>
        new(_harness.Loop, new Uri($"http://backend.test:{Port}"), time, (_, _) => Task.FromResult(_answers[_resolved++]));

    private async Task<LoopSocketStream> ConnectAsync(LoopBackendDialer dialer)
    {
        Task<Socket> accepted = _listener.AcceptAsync();
        (Socket _, LoopSocketStream stream) = await dialer.ConnectAsync(static _ => { }, CancellationToken.None).WaitAsync(LoopHarness.Timeout);
        (await accepted.WaitAsync(LoopHarness.Timeout)).Dispose();
        return stream;
    }
}
