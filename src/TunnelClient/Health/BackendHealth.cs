using Microsoft.Extensions.Options;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.TunnelClient.Health;

/// <summary>
/// Whether the backend passes its health probe, as the last probe found; uplinks read it at login and hear of changes.
/// Without a health path it is always ready and nothing waits for a probe.
/// </summary>
public sealed class BackendHealth
{
    private readonly TaskCompletionSource _firstProbe = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private volatile bool _ready = true;

    public BackendHealth(IOptions<TunnelClientOptions> options)
    {
        IsProbed = !string.IsNullOrEmpty(options.Value.HealthPath);
        if (!IsProbed)
        {
            _firstProbe.SetResult();
        }
    }

    /// <summary>A health path is set: the state comes from probes.</summary>
    public bool IsProbed { get; }

    public bool IsReady => _ready;

    /// <summary>Completes once the first probe has answered (at once without probes), so that a login reports a real state.</summary>
    public Task FirstProbe => _firstProbe.Task;

    /// <summary>Raised with the new state when it changes; handlers run on the prober's thread and must not block.</summary>
    public event Action<bool>? Changed;

    /// <returns>True when the state changed.</returns>
    public bool Report(bool ready)
    {
        bool changed = _ready != ready;
        _ready = ready;
        _firstProbe.TrySetResult();
        if (changed)
        {
            Changed?.Invoke(ready);
        }

        return changed;
    }
}
