using Microsoft.AspNetCore.Http;
using Tunnel2.Protocol.Heads;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.UnitTests.Balancing;
using Tunnel2.ProxyEntry.Routing;
using Tunnel2.UnitTests.Forwarding.Steps;

namespace Tunnel2.UnitTests.Forwarding;

/// <summary>The shared retry rule applied to one exchange, within the server's budget of attempts.</summary>
public sealed class RetryPermissionTests
{
    [Fact]
    public void A_first_bodiless_GET_may_go_to_another_client_for_every_reason()
    {
        Assert.Equal(new RetryPermission(MayRetry: true, MayRetryConnect: true, MayRetryUnanswered: true), RetryPermission.For(Exchange("GET")));
    }

    [Fact]
    public void A_request_with_a_body_is_never_retried()
    {
        Assert.Equal(default, RetryPermission.For(Exchange("PUT", hasBody: true)));
    }

    [Fact]
    public void A_bodiless_POST_is_retried_only_where_no_backend_saw_it()
    {
        Assert.Equal(new RetryPermission(MayRetry: true, MayRetryConnect: true, MayRetryUnanswered: false), RetryPermission.For(Exchange("POST")));
    }

    [Fact]
    public void An_upgrade_is_not_retried_once_its_backend_may_have_seen_it()
    {
        Assert.False(RetryPermission.For(Exchange("GET", upgrade: true)).MayRetryUnanswered);
        Assert.True(RetryPermission.For(Exchange("GET", upgrade: true)).MayRetryConnect);
    }

    [Fact]
    public void After_a_backend_failure_only_a_draining_clients_refusal_is_retried_again()
    {
        ProxyExchange exchange = Exchange("GET");
        exchange.FailedMember = MemberOf.Any();

        Assert.Equal(new RetryPermission(MayRetry: true, MayRetryConnect: false, MayRetryUnanswered: false), RetryPermission.For(exchange));
    }

    [Fact]
    public void The_last_attempt_answers_whatever_happens()
    {
        ProxyExchange exchange = Exchange("GET");
        exchange.Attempt = RetryPermission.MaxAttempts - 1;

        Assert.Equal(default, RetryPermission.For(exchange));
    }

    private static ProxyExchange Exchange(string method, bool hasBody = false, bool upgrade = false)
    {
        return ExchangeOf.Admitted(new DefaultHttpContext(), new SessionRoute("s", "/session/s", ByHost: false), new RequestHead(method, "/", [], upgrade), hasBody);
    }
}
