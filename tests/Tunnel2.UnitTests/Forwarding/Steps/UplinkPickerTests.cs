using Microsoft.AspNetCore.Http;
using Tunnel2.Balancing;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Routing;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Forwarding.Steps;

/// <summary>The server's pick step on its own: a client of the session, a stream opened on its uplink, or why not.</summary>
public sealed class UplinkPickerTests : IAsyncDisposable
{
    private readonly SessionRegistry _registry = new();
    private readonly UplinkPair _first = UplinkPair.Start();
    private readonly UplinkPair _second = UplinkPair.Start();
    private readonly UplinkPicker _picker;

    public UplinkPickerTests() => _picker = new UplinkPicker(_registry);

    public async ValueTask DisposeAsync()
    {
        await _first.DisposeAsync();
        await _second.DisposeAsync();
    }

    [Fact]
    public async Task A_stream_opens_on_the_sessions_client_and_the_exchange_names_that_member()
    {
        _registry.Register("abc", _first.Server);
        ProxyExchange exchange = Exchange("abc");
        UplinkPicker.ApplyPolicy(exchange);

        StreamOpenStatus status = _picker.OpenStream(exchange, out IHttpExchange? stream, out _);

        Assert.Equal(StreamOpenStatus.Opened, status);
        Assert.NotNull(stream);
        Assert.Same(_first.Server, exchange.Member?.Uplink);
        UplinkStream seen = await _first.Handler.NextAsync();
        Assert.Equal(stream.Id, seen.Id);
        stream.Dispose();
    }

    [Fact]
    public void The_member_a_stream_opens_on_counts_the_request_and_under_cookie_affinity_the_pick_chooses_its_cookie()
    {
        var registry = new SessionRegistry(new BalancingOptions { Affinity = AffinityMode.Cookie }, TimeProvider.System);
        registry.Register("abc", _first.Server);
        var picker = new UplinkPicker(registry);
        ProxyExchange exchange = Exchange("abc", registry.Policies.For("abc")); // the policy the route step reads
        UplinkPicker.ApplyPolicy(exchange);

        Assert.Equal(StreamOpenStatus.Opened, picker.OpenStream(exchange, out IHttpExchange? stream, out _));

        Assert.Equal(1, exchange.Member!.Requests);
        Assert.Equal($"{BalancingOptions.DefaultAffinityCookie}={exchange.Member.AffinityKey}; Path=/session/abc/; HttpOnly; SameSite=Lax", exchange.AffinityCookie);
        stream!.Dispose();
    }

    [Fact]
    public void A_session_without_clients_opens_nothing_and_says_there_is_no_client()
    {
        _registry.Register("abc", _first.Server);
        ProxyExchange exchange = Exchange("other");
        UplinkPicker.ApplyPolicy(exchange);

        StreamOpenStatus status = _picker.OpenStream(exchange, out IHttpExchange? stream, out PickStatus pick);

        Assert.Equal(StreamOpenStatus.UplinkClosed, status);
        Assert.Null(stream);
        Assert.Equal(PickStatus.NoClient, pick);
        Assert.Null(exchange.Member);
    }

    [Fact]
    public void The_member_an_earlier_attempt_failed_on_is_not_picked_again()
    {
        _registry.Register("abc", _first.Server, instanceId: "first");
        _registry.Register("abc", _second.Server, instanceId: "second");
        ProxyExchange exchange = Exchange("abc");
        UplinkPicker.ApplyPolicy(exchange);
        Assert.Equal(StreamOpenStatus.Opened, _picker.OpenStream(exchange, out IHttpExchange? firstStream, out _));
        SessionMember failed = exchange.Member!;
        firstStream!.Dispose();

        for (int attempt = 0; attempt < 4; attempt++)
        {
            exchange.FailedMember = failed;
            Assert.Equal(StreamOpenStatus.Opened, _picker.OpenStream(exchange, out IHttpExchange? stream, out _));
            Assert.NotSame(failed, exchange.Member);
            stream!.Dispose();
        }
    }

    private static ProxyExchange Exchange(string session, ProxyEntry.Policy.SessionPolicy? policy = null) =>
        ExchangeOf.Admitted(new DefaultHttpContext(), new SessionRoute(session, $"/session/{session}", ByHost: false), new RequestHead("GET", "/", []), policy: policy);
}
