using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Diagnostics;
using Tunnel2.TunnelServer.Uplinks;

namespace Tunnel2.UnitTests.Uplinks;

/// <summary>The tunnel port's <see cref="AcceptanceEvents"/> for a layer under test, with the refusals it counted, by reason, and the uplinks it counts connected.</summary>
internal sealed class AcceptanceProbe : IDisposable
{
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();
    private readonly TunnelServerMetrics _metrics;
    private readonly MeterListener _listener = new();
    private readonly List<string> _refused = [];
    private long _uplinks;

    public AcceptanceProbe()
    {
        IMeterFactory meters = _services.GetRequiredService<IMeterFactory>();
        _metrics = new TunnelServerMetrics(meters, new SessionRegistry());
        Events = new AcceptanceEvents(NullLogger<UplinkAcceptor>.Instance, _metrics);
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            // This probe's meter only: tests running at the same time each have their own, of the same name.
            if (instrument.Meter.Scope == meters && instrument.Name is "tunnel2.server.handshakes_refused" or "tunnel2.server.uplinks")
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            if (instrument.Name == "tunnel2.server.uplinks")
            {
                Interlocked.Add(ref _uplinks, value);
                return;
            }

            foreach (KeyValuePair<string, object?> tag in tags)
            {
                if (tag.Key == "reason")
                {
                    lock (_refused)
                    {
                        _refused.Add((string)tag.Value!);
                    }
                }
            }
        });
        _listener.Start();
    }

    public AcceptanceEvents Events { get; }

    /// <summary>The uplinks connected, as the metric counts them.</summary>
    public long Uplinks => Interlocked.Read(ref _uplinks);

    public string[] Refused
    {
        get
        {
            lock (_refused)
            {
                return [.. _refused];
            }
        }
    }

    public void Dispose()
    {
        _listener.Dispose();
        _metrics.Dispose();
        _services.Dispose();
    }
}
