using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// The health step, after each attempt, as YARP's passive health check runs after the forwarder
/// (<c>PassiveHealthCheckMiddleware</c> reads what <c>_next</c> left): it counts the attempt's
/// <see cref="AttemptOutcome"/> on the member it ran on. A response head ends the member's run of failures; a backend
/// the member's client could not reach counts towards its passive ejection (logged and counted when it ejects the
/// member); an exchange over with a 5xx (the backend's, or the tunnel's on its behalf) is one of the member's server
/// errors. Nothing before it counts on the member but the request the pick step sent it.
/// </summary>
internal sealed class PassiveHealth
{
    private readonly SessionRegistry _registry;
    private readonly ProxyEntryMetrics _metrics;
    private readonly ILogger _logger;

    public PassiveHealth(SessionRegistry registry, ProxyEntryMetrics metrics, ILogger<PassiveHealth> logger)
    {
        _registry = registry;
        _metrics = metrics;
        _logger = logger;
    }

    /// <summary>Counts how the attempt on <paramref name="member"/> ended.</summary>
    public void Count(ProxyExchange exchange, SessionMember member, AttemptOutcome outcome)
    {
        if (outcome == AttemptOutcome.Answered)
        {
            member.OnAnswered();
        }
        else if (outcome.SaysBackendUnreachable() && _registry.ReportUnreachable(member, out TimeSpan backoff))
        {
            ProxyEntryLog.ClientEjected(_logger, exchange.Session, member.Uplink.Name, (long)backoff.TotalMilliseconds);
            _metrics.ClientEjected();
        }

        if (outcome.IsOver() && exchange.Context.Response.StatusCode >= StatusCodes.Status500InternalServerError)
        {
            member.CountServerError();
        }
    }
}
