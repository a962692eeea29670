using System.Diagnostics.Metrics;

namespace Tunnel2.ProxyEntry.Diagnostics;

/// <summary>Counters of the public side (meter <c>Tunnel2.ProxyEntry</c>), readable by dotnet-counters or any exporter.</summary>
public sealed class ProxyEntryMetrics : IDisposable
{
    public const string MeterName = "Tunnel2.ProxyEntry";

    private readonly Meter _meter;
    private readonly Counter<long> _requests;
    private readonly Counter<long> _failures;
    private readonly UpDownCounter<long> _active;
    private readonly UpDownCounter<long> _upgraded;
    private readonly Counter<long> _ejections;

    public ProxyEntryMetrics(IMeterFactory meterFactory)
    {
        _meter = meterFactory.Create(MeterName);
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

    public void RequestFailed(string reason) => _failures.Add(1, new KeyValuePair<string, object?>("reason", reason));

    public void ClientEjected() => _ejections.Add(1);

    public void Dispose() => _meter.Dispose();
}
