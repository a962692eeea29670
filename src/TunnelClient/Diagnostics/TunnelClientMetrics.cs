using System.Diagnostics.Metrics;

namespace Tunnel2.TunnelClient.Diagnostics;

/// <summary>Meter <c>Tunnel2.TunnelClient</c>: requests relayed, failures by reason, connects.</summary>
public sealed class TunnelClientMetrics : IDisposable
{
    public const string MeterName = "Tunnel2.TunnelClient";

    private readonly Meter _meter;
    private readonly Counter<long> _relayed;
    private readonly Counter<long> _failures;
    private readonly Counter<long> _connects;

    public TunnelClientMetrics(IMeterFactory meterFactory)
    {
        _meter = meterFactory.Create(MeterName);
        _relayed = _meter.CreateCounter<long>("tunnel2.client.requests", "{request}", "Requests relayed to the backend");
        _failures = _meter.CreateCounter<long>("tunnel2.client.failures", "{request}", "Requests that failed or were refused, by reason");
        _connects = _meter.CreateCounter<long>("tunnel2.client.connects", "{connect}", "Uplinks established");
    }

    public void RequestRelayed() => _relayed.Add(1);

    public void RequestFailed(string reason) => _failures.Add(1, new KeyValuePair<string, object?>("reason", reason));

    public void Connected() => _connects.Add(1);

    public void Dispose() => _meter.Dispose();
}
