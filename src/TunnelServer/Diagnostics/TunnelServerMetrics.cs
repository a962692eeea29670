using System.Diagnostics.Metrics;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.TunnelServer.Diagnostics;

/// <summary>Meter <c>Tunnel2.TunnelServer</c>: uplinks connected, handshakes refused, sessions served and streams open.</summary>
public sealed class TunnelServerMetrics : IDisposable
{
    private readonly Meter _meter;
    private readonly UpDownCounter<long> _uplinks;
    private readonly Counter<long> _refused;

    public TunnelServerMetrics(IMeterFactory meterFactory, SessionRegistry registry)
    {
        _meter = meterFactory.Create(ServerMeter.Name); // the TCP door (ProxyEntry.Tcp.TcpMetrics) counts on this meter too

        // Read when an exporter collects, from the registry: nothing is counted on the request path for these.
        _meter.CreateObservableUpDownCounter("tunnel2.server.sessions", () => (long)registry.SessionCount, "{session}", "Sessions with at least one client");
        _meter.CreateObservableUpDownCounter("tunnel2.server.streams", () => OpenStreams(registry), "{stream}",
            "Streams open over all uplinks: requests in flight, bodies still streaming, upgraded connections");
        _uplinks = _meter.CreateUpDownCounter<long>("tunnel2.server.uplinks", "{uplink}", "Uplinks connected");
        _refused = _meter.CreateCounter<long>("tunnel2.server.handshakes_refused", "{handshake}", "Uplink handshakes refused, by reason");
    }

    public void UplinkConnected() => _uplinks.Add(1);

    public void UplinkDisconnected() => _uplinks.Add(-1);

    public void HandshakeRefused(string reason) => _refused.Add(1, new KeyValuePair<string, object?>("reason", reason));

    public void Dispose() => _meter.Dispose();

    private static long OpenStreams(SessionRegistry registry)
    {
        long open = 0;
        foreach (Uplink uplink in registry.GetAllUplinks())
        {
            open += uplink.ActiveStreamCount;
        }

        return open;
    }
}
