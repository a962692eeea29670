using System.Diagnostics;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Microsoft.Net.Http.Headers;
using Tunnel2.Protocol.Balancing;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Tracing;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Problems;
using Tunnel2.ProxyEntry.Routing;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// Forwards one public request, <c>/session/{id}/…</c> or on a session's own host name, over a stream on one of the
/// session's uplinks (picked by its balancing policy), and streams the answer back. Failures before the response head
/// become problem details; after it, the response is aborted so a truncated body never looks complete.
/// </summary>
public sealed partial class TunnelForwarder
{
    /// <summary>How many uplinks to try when the one picked closes under us, is full, or refuses as it drains.</summary>
    private const int OpenAttempts = 3;

    /// <summary>nginx's code for a caller that left before its answer, used in metrics (nothing is sent with it).</summary>
    private const int ClientClosedRequest = 499;

    private static readonly Task<ForwardingFailure?> NoBodyFailure = Task.FromResult<ForwardingFailure?>(null);

    private readonly SessionRegistry _registry;
    private readonly ProxyEntryOptions _options;
    private readonly ProxyEntryMetrics _metrics;
    private readonly ILogger<TunnelForwarder> _logger;
    private readonly PublicDrain _drain;
    private readonly NodeWarmUp _warmUp;
    private readonly VisitorAccess _access;

    public TunnelForwarder(
        SessionRegistry registry,
        IOptions<ProxyEntryOptions> options,
        ProxyEntryMetrics metrics,
        ILogger<TunnelForwarder> logger,
        PublicDrain drain,
        NodeWarmUp warmUp,
        VisitorAccess access)
    {
        _access = access;
        _registry = registry;
        _drain = drain;
        _warmUp = warmUp;
        _options = options.Value;
        _metrics = metrics;
        _logger = logger;
    }

    public async Task ForwardAsync(HttpContext context)
    {
        string rawTarget = context.Features.Get<IHttpRequestFeature>()?.RawTarget ?? context.Request.Path.Value ?? "/";
        switch (SessionTarget.TryParse(rawTarget, out string session, out string prefix, out string backendTarget))
        {
            case SessionTargetStatus.NoSession:
                await WriteNotFoundAsync(context, new SessionRoute("(none)", string.Empty, ByHost: false));
                return;
            case SessionTargetStatus.ClimbsAboveSession:
                await FailAsync(context, streamId: 0, "(none)", ForwardingFailure.PathOutsideSession);
                return;
            case SessionTargetStatus.SessionRootWithoutSlash:
                RedirectToSessionRoot(context, prefix + backendTarget);
                return;
        }

        await ForwardToSessionAsync(context, new SessionRoute(session, prefix, ByHost: false), backendTarget);
    }

    /// <summary>Forwards a request that <see cref="HostRouter"/> routed by its host: the whole path is the backend's.</summary>
    public async Task ForwardByHostAsync(HttpContext context, HostRoute route, string session)
    {
        if (route == HostRoute.NotASession)
        {
            await WriteNotFoundAsync(context, new SessionRoute(string.Empty, string.Empty, ByHost: true));
            return;
        }

        string rawTarget = context.Features.Get<IHttpRequestFeature>()?.RawTarget ?? context.Request.Path.Value ?? "/";
        switch (CanonicalTarget.TryCreate(rawTarget, fixedSegments: 0, out string backendTarget))
        {
            case CanonicalTargetStatus.ClimbsAboveRoot:
                await FailAsync(context, streamId: 0, session, ForwardingFailure.PathOutsideSession);
                return;
            case CanonicalTargetStatus.NotOriginForm:
                // Absolute-form (a proxy-style request line) or '*': the path Kestrel took out of it.
                backendTarget = context.Request.Path.ToUriComponent() + context.Request.QueryString.ToUriComponent();
                break;
        }

        await ForwardToSessionAsync(context, new SessionRoute(session, Prefix: string.Empty, ByHost: true), backendTarget);
    }

    private async Task ForwardToSessionAsync(HttpContext context, SessionRoute route, string backendTarget)
    {
        string session = route.Session;
        if (_access.Check(context, session) is { } denial)
        {
            await denial.WriteAsync(context);
            return;
        }

        if (_drain.IsDraining)
        {
            await FailAsync(context, streamId: 0, session, ForwardingFailure.ServerDraining);
            return;
        }

        RequestHead head = RequestHeadBuilder.Build(context, backendTarget, route.Prefix, out long headerBytes, out RequestHeadProblem problem);
        if (ForwardingFailure.FromHeadProblem(problem) is { } refused)
        {
            // The caller framed this request oddly; what follows it on the connection is not trusted either.
            context.Response.Headers.Connection = "close";
            await FailAsync(context, streamId: 0, session, refused);
            return;
        }

        if (headerBytes > _options.MaxRequestHeadersBytes)
        {
            await FailAsync(context, streamId: 0, session, ForwardingFailure.HeadersTooLarge);
            return;
        }

        using Activity? activity = StartForwardActivity(head, session);
        _drain.RequestStarted();
        long started = _metrics.DurationEnabled ? Stopwatch.GetTimestamp() : 0;
        bool sessionFound = false;
        try
        {
            sessionFound = await ForwardToClientAsync(context, route, backendTarget, head);
        }
        finally
        {
            _drain.RequestEnded();
            activity?.SetTag(ProxyEntryMetrics.StatusTag, context.Response.StatusCode);
            if (started != 0)
            {
                _metrics.RequestCompleted(sessionFound ? session : null, context.RequestAborted.IsCancellationRequested && !context.Response.HasStarted
                    ? ClientClosedRequest : context.Response.StatusCode, Stopwatch.GetElapsedTime(started));
            }
        }
    }

    /// <summary>
    /// The tunnel's span for one request, when a tracer listens: a child of the caller's trace (ASP.NET Core's request
    /// span, or the caller's <c>traceparent</c> when that span is off), handed on to the client in the forwarded head.
    /// </summary>
    private static Activity? StartForwardActivity(RequestHead head, string session)
    {
        if (!ProxyEntryTracing.Source.HasListeners())
        {
            return null;
        }

        ActivityContext parent = Activity.Current?.Context ?? TraceContext.ParentOf(head.Headers);
        Activity? activity = ProxyEntryTracing.Source.StartActivity(ProxyEntryTracing.ForwardSpan, ActivityKind.Client, parent);
        if (activity is not null)
        {
            activity.SetTag(ProxyEntryMetrics.SessionTag, session);
            TraceContext.Inject(head.Headers, activity);
        }

        return activity;
    }

    /// <returns>False when the session has no client at all (404): its id does not earn a metrics label.</returns>
    private async Task<bool> ForwardToClientAsync(HttpContext context, SessionRoute route, string backendTarget, RequestHead head)
    {
        string session = route.Session;

        // An upgrade request has no body (Kestrel refuses one), but its stream stays open for the bytes after a 101.
        bool upgrade = head.IsUpgrade;
        bool hasBody = !upgrade && RequestHasBody(context);
        BalancingPolicy policy = _registry.PolicyFor(session);
        string? affinityKey = AffinityKeyOf(context, policy);
        SessionMember? failedMember = null;
        for (int attempt = 0; ; attempt++)
        {
            StreamOpenStatus status = OpenStream(session, head, endStream: !hasBody && !upgrade, new PickContext(affinityKey, failedMember),
                out UplinkStream? stream, out SessionMember? member, out PickStatus pick);
            if (stream is null)
            {
                ForwardingFailure? failure = status switch
                {
                    StreamOpenStatus.HeadTooLarge => ForwardingFailure.HeadersTooLarge,
                    StreamOpenStatus.AtStreamLimit => ForwardingFailure.StreamLimit,
                    _ when _drain.IsDraining => ForwardingFailure.ServerDraining,
                    _ when failedMember is not null => ForwardingFailure.FromResetCode(ProtocolErrorCode.BackendConnectFailed),
                    _ when pick == PickStatus.NoneReady => ForwardingFailure.NoReadyClient,
                    _ => null,
                };
                await (failure is null ? TunnelNotFoundAsync(context, route, backendTarget) : FailAsync(context, streamId: 0, session, failure.Value));
                return failure is not null;
            }

            // A request without a body that a draining client refused, or whose client could not connect to its backend,
            // never reached a backend: another client may take it (the second kind once, on another client), and so may
            // an idempotent one whose backend failed before answering.
            bool mayRetry = !hasBody && attempt + 1 < OpenAttempts;
            bool mayRetryConnect = mayRetry && failedMember is null;
            var exchange = new Exchange(route, member!, policy, affinityKey, mayRetry, mayRetryConnect,
                MayRetryUnanswered: mayRetryConnect && !upgrade && HttpSyntax.IsIdempotentMethod(head.Method));
            ExchangeOutcome outcome;
            uint streamId = stream.Id; // the stream object serves another exchange once disposed
            _metrics.RequestStarted();
            member!.CountRequest();
            try
            {
                using (stream)
                {
                    outcome = await ExchangeAsync(context, stream, exchange, hasBody, upgrade);
                }
            }
            finally
            {
                _metrics.RequestEnded();
            }

            switch (outcome)
            {
                case ExchangeOutcome.Done:
                    if (context.Response.StatusCode >= StatusCodes.Status500InternalServerError)
                    {
                        member.CountServerError();
                    }

                    return true;
                case ExchangeOutcome.BackendFailed:
                    failedMember = member;
                    ProxyEntryLog.RetryingOnAnotherClient(_logger, session, streamId);
                    break;
                default:
                    ProxyEntryLog.RetryingRefusedStream(_logger, session, streamId);
                    break;
            }
        }
    }

    private Task TunnelNotFoundAsync(HttpContext context, SessionRoute route, string backendTarget)
    {
        if (_warmUp.IsWarmingUp)
        {
            return FailAsync(context, streamId: 0, route.Session, ForwardingFailure.WarmingUp);
        }

        ProxyEntryLog.TunnelNotFound(_logger, route.Session, context.Request.Method, backendTarget);
        _metrics.RequestFailed("tunnel-not-found", StatusCodes.Status404NotFound);
        return WriteNotFoundAsync(context, route);
    }

    /// <summary>
    /// Opens the stream on one of the session's uplinks. Without a stream, the status says why: no uplink left
    /// (<see cref="StreamOpenStatus.UplinkClosed"/>, with <paramref name="pick"/> telling whether clients exist that are
    /// not ready), every one passed over at its stream limit, or a head too large.
    /// </summary>
    private StreamOpenStatus OpenStream(string session, RequestHead head, bool endStream, in PickContext context,
        out UplinkStream? stream, out SessionMember? member, out PickStatus pick)
    {
        StreamOpenStatus status = StreamOpenStatus.UplinkClosed;
        bool atLimit = false;
        pick = PickStatus.NoClient;
        for (int attempt = 0; attempt < OpenAttempts; attempt++)
        {
            member = _registry.Pick(session, context, out pick);
            if (member is null)
            {
                break;
            }

            // Closed between the pick and the open (the registry drops it shortly), or full since the pick: try another.
            status = member.Uplink.TryOpenStream(head, endStream, out stream);
            if (status is StreamOpenStatus.Opened or StreamOpenStatus.HeadTooLarge)
            {
                return status;
            }

            atLimit |= status == StreamOpenStatus.AtStreamLimit;
        }

        stream = null;
        member = null;
        return atLimit ? StreamOpenStatus.AtStreamLimit : status;
    }

    /// <summary>The request's affinity key under the session's policy: a cookie's value, a header's, the caller's address.</summary>
    private static string? AffinityKeyOf(HttpContext context, BalancingPolicy policy) => policy.Affinity switch
    {
        AffinityMode.None => null,
        AffinityMode.Cookie => context.Request.Cookies[policy.AffinityCookie],
        AffinityMode.Header => context.Request.Headers[policy.AffinityHeader!] is { Count: > 0 } values ? values.ToString() : null,
        _ => context.Connection.RemoteIpAddress?.ToString(),
    };

    /// <returns>Whether the exchange is over, or the request may be retried on another client, and why.</returns>
    private async Task<ExchangeOutcome> ExchangeAsync(HttpContext context, UplinkStream stream, Exchange exchange, bool hasBody, bool upgrade)
    {
        string session = exchange.Route.Session;
        Task<ForwardingFailure?> requestBody = hasBody ? SendRequestBodyAsync(context, stream) : NoBodyFailure;
        ResponseHead head;
        try
        {
            // The response-head timeout is the uplink's (UplinkSettings.ResponseHeadTimeout): it resets the stream.
            head = await stream.ReadResponseHeadAsync().WaitAsync(context.RequestAborted);
        }
        catch (StreamResetException ex) when (exchange.MayRetry && ex.ErrorCode == ProtocolErrorCode.Draining)
        {
            return ExchangeOutcome.RefusedByDrainingClient;
        }
        catch (StreamResetException ex) when ((exchange.MayRetryConnect && ex.ErrorCode == ProtocolErrorCode.BackendConnectFailed)
                                               || (exchange.MayRetryUnanswered && ex.ErrorCode == ProtocolErrorCode.BackendUnreachable))
        {
            OnBackendUnreachable(exchange);
            return ExchangeOutcome.BackendFailed;
        }
        catch (Exception ex) when (ex is not OperationCanceledException || !context.RequestAborted.IsCancellationRequested)
        {
            stream.Reset(ProtocolErrorCode.Cancelled);
            if (ex is StreamResetException { ErrorCode: ProtocolErrorCode.BackendUnreachable or ProtocolErrorCode.BackendConnectFailed })
            {
                OnBackendUnreachable(exchange);
            }

            // A caller whose own body broke (too slow, badly framed) caused the reset: the fault is theirs, not the backend's.
            ForwardingFailure failure = await StopRequestBodyAsync(context, requestBody) ?? ex switch
            {
                StreamResetException reset => ForwardingFailure.FromResetCode(reset.ErrorCode),
                _ => ForwardingFailure.UplinkLost,
            };
            await FailAsync(context, stream.Id, session, failure);
            return ExchangeOutcome.Done;
        }
        catch (OperationCanceledException)
        {
            ProxyEntryLog.CallerGone(_logger, session, stream.Id, "before the response head");
            _metrics.RequestFailed("caller-gone", ClientClosedRequest);
            stream.Reset(ProtocolErrorCode.Cancelled);
            await StopRequestBodyAsync(context, requestBody);
            return ExchangeOutcome.Done;
        }

        exchange.Member.OnAnswered();
        if (upgrade && head.StatusCode == StatusCodes.Status101SwitchingProtocols)
        {
            await RelayUpgradedAsync(context, stream, session, head);
            return ExchangeOutcome.Done;
        }

        if (upgrade)
        {
            // The backend answered without switching: the request had no body, so this side's half of the stream ends.
            stream.TrySendEnd();
        }

        if (head.StatusCode < StatusCodes.Status200OK)
        {
            // The client passes on no interim answer and a 101 only to an upgrade request; anything else is its fault.
            stream.Reset(ProtocolErrorCode.ProtocolError);
            await StopRequestBodyAsync(context, requestBody);
            await FailAsync(context, stream.Id, session, ForwardingFailure.FromResetCode(ProtocolErrorCode.ProtocolError));
            return ExchangeOutcome.Done;
        }

        ResponseHeadWriter.Apply(head, context.Response);
        if (exchange.Policy.Affinity == AffinityMode.Cookie && exchange.AffinityKey != exchange.Member.AffinityKey)
        {
            context.Response.Headers.Append(HeaderNames.SetCookie, AffinityCookie(context, exchange));
        }
        try
        {
            await stream.CopyInputToAsync(context.Response.BodyWriter, chunked: false, context.RequestAborted);
        }
        catch (Exception ex) when (ex is IOException or OperationCanceledException)
        {
            stream.Reset(ProtocolErrorCode.Cancelled);
            if (context.RequestAborted.IsCancellationRequested)
            {
                ProxyEntryLog.CallerGone(_logger, session, stream.Id, "during the response body");
                _metrics.RequestFailed("caller-gone", ClientClosedRequest);
            }
            else if (!context.Response.HasStarted)
            {
                // Nothing reached the caller yet, so it can still get a clean error instead of a cut connection.
                context.Response.Clear();
                ForwardingFailure failure = await StopRequestBodyAsync(context, requestBody) ?? (ex is StreamResetException reset
                    ? ForwardingFailure.FromResetCode(reset.ErrorCode)
                    : ForwardingFailure.UplinkLost);
                await FailAsync(context, stream.Id, session, failure);
                return ExchangeOutcome.Done;
            }
            else
            {
                ProxyEntryLog.ResponseAborted(_logger, session, stream.Id, ex.Message);
                _metrics.RequestFailed("aborted-mid-response", context.Response.StatusCode);
                context.Abort();
            }
        }

        await StopRequestBodyAsync(context, requestBody);
        return ExchangeOutcome.Done;
    }

    /// <summary>
    /// <c>/session/{id}</c> → <c>/session/{id}/</c>, query kept: 301 as nginx answers for a prefix location, 308 for
    /// methods other than GET and HEAD so that a form post is not turned into a GET.
    /// </summary>
    private static void RedirectToSessionRoot(HttpContext context, string location)
    {
        bool safe = HttpMethods.IsGet(context.Request.Method) || HttpMethods.IsHead(context.Request.Method);
        context.Response.StatusCode = safe ? StatusCodes.Status301MovedPermanently : StatusCodes.Status308PermanentRedirect;
        context.Response.Headers.Location = location;
        context.Response.ContentLength = 0;
    }

    private static bool RequestHasBody(HttpContext context) =>
        context.Features.Get<IHttpRequestBodyDetectionFeature>()?.CanHaveBody ?? context.Request.ContentLength > 0;

    /// <returns>What the caller is told when its own body failed (too slow, badly framed); null otherwise.</returns>
    private async Task<ForwardingFailure?> SendRequestBodyAsync(HttpContext context, UplinkStream stream)
    {
        if (context.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } limit)
        {
            limit.MaxRequestBodySize = _options.MaxRequestBodySize;
        }

        try
        {
            await stream.SendBodyAsync(context.Request.BodyReader, context.RequestAborted);
        }
        catch (BadHttpRequestException ex) when (ex.StatusCode == StatusCodes.Status413PayloadTooLarge)
        {
            stream.Reset(ProtocolErrorCode.RequestBodyTooLarge);
        }
        catch (BadHttpRequestException ex)
        {
            // Kestrel refused the caller's body: below the minimum data rate (408) or badly framed (400).
            stream.Reset(ProtocolErrorCode.Cancelled);
            return ex.StatusCode == StatusCodes.Status408RequestTimeout ? ForwardingFailure.RequestBodyTooSlow : ForwardingFailure.InvalidRequestBody;
        }
        catch (IOException ex) when (ex.InnerException is OverflowException)
        {
            // Kestrel reports a chunk size too large for its arithmetic as a plain IOException ("Bad chunk size data"),
            // not as a BadHttpRequestException: the caller's framing all the same, a 400 and not the backend's 502.
            stream.Reset(ProtocolErrorCode.Cancelled);
            return ForwardingFailure.InvalidRequestBody;
        }
        catch (Exception ex) when (ex is IOException or OperationCanceledException or InvalidOperationException)
        {
            // The caller stopped sending, or the stream failed first: either way nothing more goes up this stream.
            stream.Reset(ProtocolErrorCode.Cancelled);
        }

        return null;
    }

    /// <summary>Once the exchange is over, an unfinished upload is cut short rather than waited for.</summary>
    private static async Task<ForwardingFailure?> StopRequestBodyAsync(HttpContext context, Task<ForwardingFailure?> requestBody)
    {
        if (!requestBody.IsCompleted)
        {
            context.Request.BodyReader.CancelPendingRead();
        }

        return await requestBody;
    }

    /// <summary>The member's backend could not be reached: counted towards its passive ejection.</summary>
    private void OnBackendUnreachable(in Exchange exchange)
    {
        if (_registry.ReportUnreachable(exchange.Member, out TimeSpan backoff))
        {
            ProxyEntryLog.ClientEjected(_logger, exchange.Route.Session, exchange.Member.Uplink.Name, (long)backoff.TotalMilliseconds);
            _metrics.ClientEjected();
        }
    }

    /// <summary>
    /// The cookie that keeps a caller on the client that answered (cookie affinity): for the session's path, or for the
    /// whole host when the session has a host name of its own.
    /// </summary>
    private static string AffinityCookie(HttpContext context, in Exchange exchange) =>
        string.Concat(exchange.Policy.AffinityCookie, "=", exchange.Member.AffinityKey, "; Path=",
            exchange.Route.Prefix.Length == 0 ? "/" : exchange.Route.Prefix + "/",
            context.Request.IsHttps ? "; HttpOnly; SameSite=Lax; Secure" : "; HttpOnly; SameSite=Lax");

    private async Task FailAsync(HttpContext context, uint streamId, string session, ForwardingFailure failure)
    {
        ProxyEntryLog.RequestFailed(_logger, session, streamId, context.Request.Method, context.Request.Path.Value ?? "/", failure.Status, failure.Reason);
        _metrics.RequestFailed(failure.Reason, failure.Status);
        if (context.Response.HasStarted)
        {
            context.Abort();
            return;
        }

        int? retryAfter = failure.Status == StatusCodes.Status503ServiceUnavailable ? _options.RetryAfterSeconds : null;
        await ProblemResponse.WriteAsync(context, failure.Status, failure.Type, failure.Title,
            $"Session '{session}': {failure.Title.ToLowerInvariant()}.", retryAfter);
    }

    private static Task WriteNotFoundAsync(HttpContext context, in SessionRoute route) =>
        ProblemResponse.WriteAsync(context, StatusCodes.Status404NotFound, ProblemTypes.TunnelNotFound, "Tunnel not found",
            !route.ByHost
                ? $"No tunnel client is connected for session '{route.Session}'."
                : route.Session.Length == 0
                    ? $"No tunnel is served at host '{context.Request.Host.Host}'."
                    : $"No tunnel client is connected for host '{context.Request.Host.Host}' (session '{route.Session}').");
}
