using System.Diagnostics.Metrics;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Configuration;

namespace Tunnel2.ProxyEntry.Diagnostics;

/// <summary>
/// Instruments of the public side (meter <c>Tunnel2.ProxyEntry</c>), readable by dotnet-counters or any exporter:
/// requests, failures by reason and status, requests in flight, ejections, upgraded connections, and the duration of
/// each request by session (sessions beyond <see cref="SessionLabels"/>' bound counted together).
/// </summary>
public sealed class ProxyEntryMetrics : IDisposable
{
    public const string MeterName = "Tunnel2.ProxyEntry";

    public const string RequestDurationName = "tunnel2.proxy.request.duration";

    public const string SessionTag = "tunnel2.session";

    public const string StatusTag = "http.response.status_code";

    /// <summary>nginx's code for a caller that left before its answer, used in metrics (nothing is sent with it).</summary>
    internal const int ClientClosedRequest = 499;

    private readonly Meter _meter;
    private readonly Counter<long> _requests;
    private readonly Counter<long> _failures;
    private readonly UpDownCounter<long> _active;
    private readonly UpDownCounter<long> _upgraded;
    private readonly Counter<long> _ejections;
    private readonly Histogram<double> _duration;
    private readonly SessionLabels _sessions;

    public ProxyEntryMetrics(IMeterFactory meterFactory, IOptions<ProxyEntryOptions> options)
    {
        _meter = meterFactory.Create(MeterName);
        _sessions = new SessionLabels(options.Value.MetricsSessionLimit);
        _duration = _meter.CreateHistogram(RequestDurationName, "s",
            "Time from a request's arrival until its response ends, by session and status code",
            advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = DurationBuckets });
        _requests = _meter.CreateCounter<long>("tunnel2.proxy.requests", "{request}", "Requests forwarded through a tunnel");
        _failures = _meter.CreateCounter<long>("tunnel2.proxy.failures", "{request}", "Requests the tunnel answered with an error or aborted, by reason");
        _active = _meter.CreateUpDownCounter<long>("tunnel2.proxy.active_requests", "{request}", "Requests in flight through a tunnel");
        _ejections = _meter.CreateCounter<long>("tunnel2.proxy.client_ejections", "{ejection}", "Clients passed over for a while after answers in a row that their backend was unreachable");
        _upgraded = _meter.CreateUpDownCounter<long>("tunnel2.proxy.upgraded_connections", "{connection}", "Connections switched to another protocol (WebSocket, …) and relayed as bytes");
    }

    public void RequestStarted()
    {
        _requests.Add(1);
        _active.Add(1);
    }

    public void RequestEnded() => _active.Add(-1);

    public void UpgradeStarted() => _upgraded.Add(1);

    public void UpgradeEnded() => _upgraded.Add(-1);

    /// <summary>Whether an exporter listens to request durations: the forwarder reads the clock only then.</summary>
    public bool DurationEnabled => _duration.Enabled;

    /// <param name="status">What the caller got: the status written, or 499 (nginx's "client closed request") when it left first.</param>
    public void RequestFailed(string reason, int status) =>
        _failures.Add(1, new KeyValuePair<string, object?>("reason", reason), new KeyValuePair<string, object?>("http.response.status_code", status));

    /// <param name="session">The request's session; null when it had no client (a made-up id must not take a label).</param>
    public void RequestCompleted(string? session, int status, TimeSpan elapsed) =>
        _duration.Record(elapsed.TotalSeconds, new KeyValuePair<string, object?>(SessionTag, session is null ? SessionLabels.Unknown : _sessions.LabelFor(session)),
            new KeyValuePair<string, object?>(StatusTag, status));

    /// <summary>The buckets ASP.NET Core gives <c>http.server.request.duration</c>, so the two compare bucket by bucket.</summary>
    private static readonly double[] DurationBuckets = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

    public void ClientEjected() => _ejections.Add(1);

    public void Dispose() => _meter.Dispose();
}
