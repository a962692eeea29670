using System.Diagnostics.Metrics;
using Tunnel2.TunnelServer.Diagnostics;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary>
/// The TCP sessions' instruments, on the server's meter (<c>Tunnel2.TunnelServer</c>): connections open now, refused
/// (by reason) and ended (by cause). Every refused or failed connection is counted here as well as logged.
/// </summary>
public sealed class TcpMetrics
{
    private readonly Counter<long> _refused;
    private readonly Counter<long> _ended;
    private readonly UpDownCounter<long> _open;

    public TcpMetrics(IMeterFactory meterFactory)
    {
        Meter meter = meterFactory.Create(TunnelServerMetrics.MeterName); // the factory's one meter of that name, disposed with it
        _open = meter.CreateUpDownCounter<long>("tunnel2.server.tcp.connections", "{connection}", "TCP connections open on the sessions' ports");
        _refused = meter.CreateCounter<long>("tunnel2.server.tcp.connections_refused", "{connection}",
            "TCP callers refused before anything reached a client, by reason");
        _ended = meter.CreateCounter<long>("tunnel2.server.tcp.connections_ended", "{connection}", "TCP connections ended, by cause");
    }

    public void Refused(string reason) => _refused.Add(1, new KeyValuePair<string, object?>("reason", reason));

    public void Opened() => _open.Add(1);

    public void Ended(string cause)
    {
        _open.Add(-1);
        _ended.Add(1, new KeyValuePair<string, object?>("cause", cause));
    }
}
