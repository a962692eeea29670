using System.Diagnostics.Metrics;
using Tunnel2.ProxyEntry.Diagnostics;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>
/// The TCP sessions' instruments, on the server's meter (<see cref="ServerMeter"/>): connections open now, refused
/// (by reason) and ended (by cause). Every refused or failed connection is counted here as well as logged.
/// </summary>
public sealed class TcpMetrics
{
    private readonly Counter<long> _refused;
    private readonly Counter<long> _ended;
    private readonly UpDownCounter<long> _open;
    private readonly Counter<long> _targetsRefused;
    private readonly Counter<long> _ejections;

    public TcpMetrics(IMeterFactory meterFactory)
    {
#pragma warning disable CA2000 // the factory owns the meters it creates and disposes them with itself
        Meter meter = meterFactory.Create(ServerMeter.Name); // the factory's one meter of that name, disposed with it
#pragma warning restore CA2000
        _open = meter.CreateUpDownCounter<long>("tunnel2.server.tcp.connections", "{connection}", "TCP connections open on the sessions' ports");
        _refused = meter.CreateCounter<long>("tunnel2.server.tcp.connections_refused", "{connection}",
            "TCP callers refused before anything reached a client, by reason");
        _ended = meter.CreateCounter<long>("tunnel2.server.tcp.connections_ended", "{connection}", "TCP connections ended, by cause");
        _targetsRefused = meter.CreateCounter<long>("tunnel2.server.tcp.targets_refused", "{connection}",
            "TCP callers whose client's target refused them before anything reached it (each is tried on the next client)");
        _ejections = meter.CreateCounter<long>("tunnel2.server.tcp.clients_ejected", "{ejection}",
            "Clients passed over for new TCP callers after their targets refused (TunnelServer:Tcp:EjectAfter)");
    }

    public void Refused(string reason) => _refused.Add(1, new KeyValuePair<string, object?>("reason", reason));

    public void Opened() => _open.Add(1);

    public void TargetRefused() => _targetsRefused.Add(1);

    public void ClientEjected() => _ejections.Add(1);

    public void Ended(string cause)
    {
        _open.Add(-1);
        _ended.Add(1, new KeyValuePair<string, object?>("cause", cause));
    }
}
