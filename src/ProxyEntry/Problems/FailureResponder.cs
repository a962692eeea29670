using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.ProxyEntry.Problems;

/// <summary>
/// Tells the caller that its request failed: a log line, the failure metric and problem details, or a cut connection
/// once the response has started (a truncated body must never look complete).
/// </summary>
internal sealed class FailureResponder
{
    private readonly ProxyEntryOptions _options;
    private readonly ProxyEntryMetrics _metrics;
    private readonly ILogger _logger;
    private readonly NodeWarmUp _warmUp;

    public FailureResponder(IOptions<ProxyEntryOptions> options, ProxyEntryMetrics metrics, ILogger<FailureResponder> logger, NodeWarmUp warmUp)
    {
        _options = options.Value;
        _metrics = metrics;
        _logger = logger;
        _warmUp = warmUp;
    }

    public async Task FailAsync(HttpContext context, uint streamId, string session, ForwardingFailure failure)
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

    /// <summary>The session has no client to pick: 503 while this node warms up, 404 after.</summary>
    public Task TunnelNotFoundAsync(HttpContext context, in SessionRoute route, string backendTarget)
    {
        if (_warmUp.IsWarmingUp)
        {
            return FailAsync(context, streamId: 0, route.Session, ForwardingFailure.WarmingUp);
        }

        ProxyEntryLog.TunnelNotFound(_logger, route.Session, context.Request.Method, backendTarget);
        _metrics.RequestFailed("tunnel-not-found", StatusCodes.Status404NotFound);
        return NotFoundAsync(context, route);
    }

    public static Task NotFoundAsync(HttpContext context, in SessionRoute route) =>
        ProblemResponse.WriteAsync(context, StatusCodes.Status404NotFound, ProblemTypes.TunnelNotFound, "Tunnel not found",
            !route.ByHost
                ? $"No tunnel client is connected for session '{route.Session}'."
                : route.Session.Length == 0
                    ? $"No tunnel is served at host '{context.Request.Host.Host}'."
                    : $"No tunnel client is connected for host '{context.Request.Host.Host}' (session '{route.Session}').");
}
