using System.Diagnostics.Metrics;

namespace Tunnel2.TunnelClient.Diagnostics;

/// <summary>Meter <c>Tunnel2.TunnelClient</c>: requests relayed, failures by reason, connects, backend connections closed by cause, backend ejections.</summary>
public sealed class TunnelClientMetrics : IDisposable
{
    public const string MeterName = "Tunnel2.TunnelClient";

    private readonly Meter _meter;
    private readonly Counter<long> _relayed;
    private readonly Counter<long> _failures;
    private readonly Counter<long> _connects;
    private readonly UpDownCounter<long> _uplinks;
    private readonly Counter<long> _backendClosed;
    private readonly UpDownCounter<long> _upgraded;
    private readonly Counter<long> _backendEjections;

    public TunnelClientMetrics(IMeterFactory meterFactory)
    {
        _meter = meterFactory.Create(MeterName);
        _relayed = _meter.CreateCounter<long>("tunnel2.client.requests", "{request}", "Requests relayed to the backend");
        _failures = _meter.CreateCounter<long>("tunnel2.client.failures", "{request}", "Requests that failed or were refused, by reason");
        _connects = _meter.CreateCounter<long>("tunnel2.client.connects", "{connect}", "Uplinks established, by server");
        _uplinks = _meter.CreateUpDownCounter<long>("tunnel2.client.uplinks", "{uplink}", "Uplinks up now, by server");
        _backendClosed = _meter.CreateCounter<long>("tunnel2.client.backend_connections.closed", "{connection}",
            "Backend connections closed instead of going back to the pool, by cause");
        _backendEjections = _meter.CreateCounter<long>("tunnel2.client.backend_ejections", "{ejection}",
            "Backends passed over for a while after connects in a row failed, by backend");
        _upgraded = _meter.CreateUpDownCounter<long>("tunnel2.client.upgraded_streams", "{stream}", "Streams switched to another protocol (WebSocket, …), relaying bytes");
    }

    public void RequestRelayed() => _relayed.Add(1);

    public void RequestFailed(string reason) => _failures.Add(1, new KeyValuePair<string, object?>("reason", reason));

    /// <summary>
    /// An uplink to <paramref name="server"/> came up: its host:port, or host:port@address:port for one node of a name
    /// resolved into several (<c>UplinkTarget.Label</c>).
    /// </summary>
    public void UplinkUp(string server)
    {
        _connects.Add(1, new KeyValuePair<string, object?>("server", server));
        _uplinks.Add(1, new KeyValuePair<string, object?>("server", server));
    }

    /// <summary>An uplink to <paramref name="server"/> that was up has closed.</summary>
    public void UplinkDown(string server) => _uplinks.Add(-1, new KeyValuePair<string, object?>("server", server));

    public void BackendConnectionClosed(string cause) => _backendClosed.Add(1, new KeyValuePair<string, object?>("cause", cause));

    public void BackendEjected(string backend) => _backendEjections.Add(1, new KeyValuePair<string, object?>("backend", backend));

    public void UpgradeStarted() => _upgraded.Add(1);

    public void UpgradeEnded() => _upgraded.Add(-1);

    public void Dispose() => _meter.Dispose();
}
