using System.Diagnostics.Metrics;

namespace Tunnel2.TunnelServer.Diagnostics;

/// <summary>Meter <c>Tunnel2.TunnelServer</c>: uplinks connected and handshakes refused.</summary>
public sealed class TunnelServerMetrics : IDisposable
{
    public const string MeterName = "Tunnel2.TunnelServer";

    private readonly Meter _meter;
    private readonly UpDownCounter<long> _uplinks;
    private readonly Counter<long> _refused;

    public TunnelServerMetrics(IMeterFactory meterFactory)
    {
        _meter = meterFactory.Create(MeterName);
        _uplinks = _meter.CreateUpDownCounter<long>("tunnel2.server.uplinks", "{uplink}", "Uplinks connected");
        _refused = _meter.CreateCounter<long>("tunnel2.server.handshakes_refused", "{handshake}", "Uplink handshakes refused, by reason");
    }

    public void UplinkConnected() => _uplinks.Add(1);

    public void UplinkDisconnected() => _uplinks.Add(-1);

    public void HandshakeRefused(string reason) => _refused.Add(1, new KeyValuePair<string, object?>("reason", reason));

    public void Dispose() => _meter.Dispose();
}
