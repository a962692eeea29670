using Microsoft.Extensions.Options;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.TunnelClient.Health;

/// <summary>
/// Whether this client can serve, as the last probes found: ready while at least one of its backends passes its probe.
/// Uplinks read it at login and hear of changes. Without a health path it is always ready and nothing waits for a probe.
/// </summary>
public sealed class BackendHealth
{
    private readonly TaskCompletionSource _firstProbe = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly BackendSet _backends;
    private readonly Lock _lock = new();
    private volatile bool _ready = true;

    public BackendHealth(IOptions<TunnelClientOptions> options, BackendSet backends)
    {
        _backends = backends;
        IsProbed = !string.IsNullOrEmpty(options.Value.Health.Path);
        if (!IsProbed)
        {
            _firstProbe.SetResult();
        }
    }

    /// <summary>A health path is set: the state comes from probes.</summary>
    public bool IsProbed { get; }

    public bool IsReady => _ready;

    /// <summary>Completes once every backend has answered its first probe (at once without probes), so that a login reports a real state.</summary>
    public Task FirstProbe => _firstProbe.Task;

    /// <summary>Raised with the new state when it changes; handlers run on the prober's thread and must not block.</summary>
    public event Action<bool>? Changed;

    /// <summary>Records one backend's probe; the client's state follows (ready while any backend is).</summary>
    /// <returns>True when that backend's state changed.</returns>
    public bool Report(Backend backend, bool ready)
    {
        bool clientChanged;
        bool backendChanged;
        lock (_lock)
        {
            backendChanged = backend.ReportProbe(ready);
            bool anyReady = _backends.AnyProbedReady;
            clientChanged = _ready != anyReady;
            _ready = anyReady;
        }

        if (clientChanged)
        {
            Changed?.Invoke(_ready);
        }

        return backendChanged;
    }

    /// <summary>Every backend has been probed once.</summary>
    public void OnFirstRoundProbed() => _firstProbe.TrySetResult();
}
