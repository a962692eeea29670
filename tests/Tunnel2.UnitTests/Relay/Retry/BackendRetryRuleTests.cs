using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Relay.Pipeline;
using Tunnel2.TunnelClient.Relay.Retry;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Relay.Retry;

public sealed class BackendRetryRuleTests
{
    [Theory]
    // Nothing reached the backend: any request may go to another, body or not.
    [InlineData("ConnectFailed", "POST", true, false, 0, "AnotherBackend")]
    [InlineData("ConnectFailed", "GET", false, false, 0, "AnotherBackend")]
    // A keep-alive connection closed while idle: one fresh try on the same backend, without a body.
    [InlineData("ClosedWithoutAnswer", "POST", false, true, 0, "SameBackend")]
    [InlineData("ClosedWithoutAnswer", "GET", false, true, 1, "AnotherBackend")]
    [InlineData("ClosedWithoutAnswer", "POST", true, true, 0, "None")]
    [InlineData("ClosedWithoutAnswer", "POST", false, false, 0, "None")]
    // It may have reached the backend: only idempotent, bodiless requests go to another.
    [InlineData("FailedBeforeAnswer", "GET", false, false, 0, "AnotherBackend")]
    [InlineData("FailedBeforeAnswer", "DELETE", false, true, 0, "AnotherBackend")]
    [InlineData("FailedBeforeAnswer", "PUT", true, false, 0, "None")]
    [InlineData("FailedBeforeAnswer", "POST", false, false, 0, "None")]
    [InlineData("Done", "GET", false, false, 0, "None")]
    public async Task An_attempt_is_retried_only_where_the_request_cannot_have_been_acted_on_twice(
        string outcome, string method, bool hasBody, bool reused, int attemptOnBackend, string expected)
    {
        await using UplinkPair pair = UplinkPair.Start();
        var request = new RequestHead(method, "/", []);
        (_, var stream) = await pair.OpenAsync(request, endStream: !hasBody);
        var exchange = new RelayExchange();
        exchange.Start(stream, request, observer: null);
        exchange.ConnectionReused = reused;
        exchange.AttemptOnBackend = attemptOnBackend;

        Assert.Equal(Enum.Parse<RetryDecision>(expected), BackendRetryRule.Decide(exchange, Enum.Parse<AttemptOutcome>(outcome)));
    }

    [Fact]
    public async Task An_upgrade_request_is_never_resent_to_another_backend_after_it_went_out()
    {
        await using UplinkPair pair = UplinkPair.Start();
        var request = new RequestHead("GET", "/ws", [new("Connection", "Upgrade"), new("Upgrade", "websocket")]);
        (_, var stream) = await pair.OpenAsync(request, endStream: false);
        var exchange = new RelayExchange();
        exchange.Start(stream, request, observer: null);

        Assert.True(exchange.IsUpgrade);
        Assert.False(exchange.HasBody);
        Assert.Equal(RetryDecision.None, BackendRetryRule.Decide(exchange, AttemptOutcome.FailedBeforeAnswer));
        Assert.Equal(RetryDecision.AnotherBackend, BackendRetryRule.Decide(exchange, AttemptOutcome.ConnectFailed));
    }
}
