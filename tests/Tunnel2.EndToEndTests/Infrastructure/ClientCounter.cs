using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// Sums one counter of one in-process host by the value of one tag, as a metrics exporter would see it. Only the host's
/// own meters count (several clients in one test process publish instruments of the same name).
/// </summary>
public sealed class ClientCounter : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<string, long> _byTag = new();

    public ClientCounter(IServiceProvider services, string instrument, string tag)
    {
        object scope = services.GetRequiredService<IMeterFactory>();
        _listener.InstrumentPublished = (published, listener) =>
        {
            if (ReferenceEquals(published.Meter.Scope, scope) && published.Name == instrument)
            {
                listener.EnableMeasurementEvents(published);
            }
        };
        _listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            foreach (KeyValuePair<string, object?> pair in tags)
            {
                if (pair.Key == tag)
                {
                    _byTag.AddOrUpdate(pair.Value?.ToString() ?? string.Empty, value, (_, sum) => sum + value);
                }
            }
        });
        _listener.Start();
    }

    public long this[string tagValue] => _byTag.GetValueOrDefault(tagValue);

    public void Dispose() => _listener.Dispose();
}
