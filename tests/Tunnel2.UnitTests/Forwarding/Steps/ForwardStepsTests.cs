using System.Diagnostics.Metrics;
using System.Text;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Forwarding.Retry;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Problems;
using Tunnel2.ProxyEntry.Routing;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.ProxyEntry.Upgrades;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Forwarding.Steps;

/// <summary>
/// The server's forward and retry steps on their own, over a real uplink pair whose client side the test plays:
/// one attempt answers, hands a retryable refusal back, or answers the failure, and says so in its outcome; the health
/// step counts that outcome on the member; the retry step picks again.
/// </summary>
public sealed class ForwardStepsTests : IAsyncDisposable
{
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();
    private readonly SessionRegistry _registry = new(new BalancingOptions { EjectAfter = 2 }, TimeProvider.System);
    private readonly UplinkPair _uplinks = UplinkPair.Start();
    private readonly HeldBackUploads _heldBack = new();
    private readonly UplinkPicker _picker;
    private readonly ForwardAttempt _attempt;
    private readonly PassiveHealth _health;
    private readonly RetryPolicy _retry;

    public ForwardStepsTests()
    {
        IOptions<ProxyEntryOptions> options = Options.Create(new ProxyEntryOptions { WarmUp = TimeSpan.Zero });
        var metrics = new ProxyEntryMetrics(_services.GetRequiredService<IMeterFactory>(), options);
        var drain = new PublicDrain();
        var failures = new FailureResponder(options, metrics, NullLogger<FailureResponder>.Instance, new NodeWarmUp(options));
        _picker = new UplinkPicker(_registry);
        _attempt = new ForwardAttempt(new RequestBodyPump(options, _heldBack, NullLogger<RequestBodyPump>.Instance), new UpgradeRelay(metrics, drain, NullLogger<UpgradeRelay>.Instance),
            failures, metrics, NullLogger<ForwardAttempt>.Instance);
        _health = new PassiveHealth(_registry, metrics, NullLogger<PassiveHealth>.Instance);
        _retry = new RetryPolicy(_picker, _attempt, _health, failures, drain, NullLogger<RetryPolicy>.Instance);
    }

    public async ValueTask DisposeAsync()
    {
        await _uplinks.DisposeAsync();
        await _services.DisposeAsync();
        _heldBack.Dispose();
    }

    [Fact]
    public async Task An_answered_attempt_writes_the_status_and_body_to_the_caller()
    {
        _registry.Register("abc", _uplinks.Server);
        ProxyExchange exchange = Exchange("abc");
        UplinkStream stream = Open(exchange);
        Task<AttemptOutcome> forwarding = _attempt.ForwardAsync(exchange, stream);

        await AnswerAsync(await _uplinks.Handler.NextAsync(), 201, "made");

        Assert.Equal(AttemptOutcome.Answered, await forwarding.WithTimeout());
        Assert.Equal(201, exchange.Context.Response.StatusCode);
        Assert.Equal("made", BodyOf(exchange.Context));
    }

    [Fact]
    public async Task A_draining_clients_refusal_of_a_retryable_request_goes_back_to_the_retry_step_unanswered()
    {
        _registry.Register("abc", _uplinks.Server);
        ProxyExchange exchange = Exchange("abc");
        UplinkStream stream = Open(exchange);
        Task<AttemptOutcome> forwarding = _attempt.ForwardAsync(exchange, stream);

        (await _uplinks.Handler.NextAsync()).Reset(ProtocolErrorCode.Draining);

        Assert.Equal(AttemptOutcome.RetryAfterDrainingRefusal, await forwarding.WithTimeout());
        Assert.False(exchange.Context.Response.HasStarted);
        Assert.Equal(200, exchange.Context.Response.StatusCode); // nothing written: the retry step decides
    }

    [Fact]
    public async Task A_refusal_that_may_not_be_retried_is_answered_as_the_failure_it_is()
    {
        _registry.Register("abc", _uplinks.Server);
        ProxyExchange exchange = Exchange("abc", method: "POST");
        UplinkStream stream = Open(exchange);
        Task<AttemptOutcome> forwarding = _attempt.ForwardAsync(exchange, stream);

        (await _uplinks.Handler.NextAsync()).Reset(ProtocolErrorCode.BackendTimeout);

        Assert.Equal(AttemptOutcome.Failed, await forwarding.WithTimeout());
        Assert.Equal(StatusCodes.Status504GatewayTimeout, exchange.Context.Response.StatusCode);
    }

    [Fact]
    public async Task The_retry_step_answers_a_session_without_clients_with_tunnel_not_found()
    {
        ProxyExchange exchange = Exchange("nobody");

        await _retry.ForwardAsync(exchange).WithTimeout();

        Assert.Equal(StatusCodes.Status404NotFound, exchange.Context.Response.StatusCode);
        Assert.Contains(Tunnel2.Hosting.ProblemTypes.TunnelNotFound, BodyOf(exchange.Context), StringComparison.Ordinal);
        Assert.False(exchange.SessionFound);
    }

    [Fact]
    public async Task The_retry_step_tries_again_after_a_draining_refusal_and_passes_on_the_next_answer()
    {
        _registry.Register("abc", _uplinks.Server);
        ProxyExchange exchange = Exchange("abc");
        Task retrying = _retry.ForwardAsync(exchange);

        (await _uplinks.Handler.NextAsync()).Reset(ProtocolErrorCode.Draining);
        await AnswerAsync(await _uplinks.Handler.NextAsync(), 200, "second");

        await retrying.WithTimeout();
        Assert.Equal(1, exchange.Attempt);
        Assert.Equal(200, exchange.Context.Response.StatusCode);
        Assert.Equal("second", BodyOf(exchange.Context));
        Assert.True(exchange.SessionFound);
    }

    [Fact]
    public async Task An_attempt_whose_client_cannot_reach_its_backend_says_so_and_counts_nothing_itself()
    {
        _registry.Register("abc", _uplinks.Server);
        ProxyExchange exchange = Exchange("abc", method: "POST");
        UplinkStream stream = Open(exchange);
        SessionMember member = exchange.Member!;
        Task<AttemptOutcome> forwarding = _attempt.ForwardAsync(exchange, stream);

        (await _uplinks.Handler.NextAsync()).Reset(ProtocolErrorCode.BackendUnreachable);

        Assert.Equal(AttemptOutcome.BackendUnreachable, await forwarding.WithTimeout());
        Assert.Equal(StatusCodes.Status502BadGateway, exchange.Context.Response.StatusCode);
        Assert.Equal(0, member.ServerErrors); // the health step counts it, not the attempt
        Assert.True(member.IsReady(TimeProvider.System.GetTimestamp()));
    }

    [Fact]
    public void The_health_step_ejects_a_member_after_its_backend_was_unreachable_twice_in_a_row_and_counts_its_5xx()
    {
        _registry.Register("abc", _uplinks.Server);
        ProxyExchange exchange = Exchange("abc");
        SessionMember member = _registry.GetMembers("abc")[0];
        exchange.Context.Response.StatusCode = StatusCodes.Status502BadGateway;

        _health.Count(exchange, member, AttemptOutcome.RetryAfterBackendFailure);
        Assert.True(member.IsReady(TimeProvider.System.GetTimestamp()));
        Assert.Equal(0, member.ServerErrors); // retried elsewhere: not this member's answer

        _health.Count(exchange, member, AttemptOutcome.BackendUnreachable);
        Assert.False(member.IsReady(TimeProvider.System.GetTimestamp()));
        Assert.Equal(1, member.ServerErrors);
    }

    [Fact]
    public void The_health_step_ends_a_members_run_of_failures_when_an_answer_came()
    {
        _registry.Register("abc", _uplinks.Server);
        ProxyExchange exchange = Exchange("abc");
        SessionMember member = _registry.GetMembers("abc")[0];

        _health.Count(exchange, member, AttemptOutcome.BackendUnreachable);
        _health.Count(exchange, member, AttemptOutcome.Answered);
        _health.Count(exchange, member, AttemptOutcome.BackendUnreachable);

        Assert.True(member.IsReady(TimeProvider.System.GetTimestamp()));
        Assert.Equal(0, member.ServerErrors); // the status stayed 200
    }

    [Fact]
    public async Task After_a_backend_failure_the_retry_step_counts_it_on_the_member_and_tries_another()
    {
        await using UplinkPair second = UplinkPair.Start();
        _registry.Register("abc", _uplinks.Server, instanceId: "first");
        _registry.Register("abc", second.Server, instanceId: "second");
        ProxyExchange exchange = Exchange("abc");
        Task retrying = _retry.ForwardAsync(exchange);

        UplinkPair failing = await FirstAsked(_uplinks, second);
        (await failing.Handler.NextAsync()).Reset(ProtocolErrorCode.BackendConnectFailed);
        UplinkPair answering = failing == _uplinks ? second : _uplinks;
        await AnswerAsync(await answering.Handler.NextAsync(), 200, "other");

        await retrying.WithTimeout();
        Assert.Equal("other", BodyOf(exchange.Context));
        Assert.NotNull(exchange.FailedMember);
        Assert.Same(failing.Server, exchange.FailedMember!.Uplink);
        Assert.Same(answering.Server, exchange.Member!.Uplink);
        Assert.Equal(1, exchange.FailedMember.Requests);
        Assert.Equal(1, exchange.Member.Requests);
    }

    private static async Task<UplinkPair> FirstAsked(UplinkPair one, UplinkPair other)
    {
        Task<UplinkPair> a = WaitAsked(one);
        Task<UplinkPair> b = WaitAsked(other);
        return await await Task.WhenAny(a, b).WithTimeout();
    }

    private static async Task<UplinkPair> WaitAsked(UplinkPair pair)
    {
        while (pair.Handler.Ids.Count == 0)
        {
            await Task.Delay(5);
        }

        return pair;
    }

    private UplinkStream Open(ProxyExchange exchange)
    {
        UplinkPicker.ApplyPolicy(exchange);
        Assert.Equal(StreamOpenStatus.Opened, _picker.OpenStream(exchange, out IHttpExchange? stream, out _));
        exchange.Retry = RetryPermission.For(exchange);
        return (UplinkStream)stream!;
    }

    private static async Task AnswerAsync(UplinkStream client, int status, string body)
    {
        byte[] bytes = Encoding.ASCII.GetBytes(body);
        client.SendResponseHead(new ResponseHead(status, [new HeaderField("Content-Length", bytes.Length.ToString(System.Globalization.CultureInfo.InvariantCulture))]), endStream: false);
        await client.SendAsync(new System.Buffers.ReadOnlySequence<byte>(bytes), endStream: true, CancellationToken.None);
    }

    private static ProxyExchange Exchange(string session, string method = "GET")
    {
        var context = new DefaultHttpContext();
        context.Request.Method = method;
        context.Response.Body = new MemoryStream();
        return ExchangeOf.Admitted(context, new SessionRoute(session, $"/session/{session}", ByHost: false), new RequestHead(method, "/", []));
    }

    private static string BodyOf(HttpContext context)
    {
        context.Response.BodyWriter.FlushAsync().AsTask().GetAwaiter().GetResult();
        return Encoding.UTF8.GetString(((MemoryStream)context.Response.Body).ToArray());
    }
}
