using Microsoft.Extensions.Options;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Shaping;

namespace Tunnel2.TunnelClient.Health;

/// <summary>
/// Probes the health path of each backend every interval, all at once: a 2xx or 3xx answer within the timeout is
/// ready, anything else (another status, a refused connection, no answer) is unready. One failed probe is enough, so a
/// backend gets no requests within one interval (nor the client, from the server, once all fail); one good probe
/// brings it back. Redirects are not followed.
/// </summary>
public sealed class BackendHealthProbe : BackgroundService
{
    private readonly BackendHealth _health;
    private readonly TunnelClientOptions _options;
    private readonly HostHeaderPolicy _hostHeader;
    private readonly ILogger<BackendHealthProbe> _logger;
    private readonly (Backend Backend, Uri Url)[] _targets = [];

    public BackendHealthProbe(BackendHealth health, BackendSet backends, IOptions<TunnelClientOptions> options, ILogger<BackendHealthProbe> logger)
    {
        _health = health;
        _options = options.Value;
        _hostHeader = backends.HostHeader;
        _logger = logger;
        if (health.IsProbed)
        {
            _targets = new (Backend, Uri)[backends.All.Count];
            for (int i = 0; i < _targets.Length; i++)
            {
                _targets[i] = (backends.All[i], new Uri(backends.All[i].Url, _options.Health.Path));
            }
        }
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        if (_targets.Length == 0)
        {
            return;
        }

#pragma warning disable CA2000 // the HttpClient owns its handler (disposeHandler defaults to true) and is itself a using
        using var client = new HttpClient(new SocketsHttpHandler
        {
            AllowAutoRedirect = false,
            UseProxy = false,
            ConnectTimeout = _options.Health.Timeout,
            PooledConnectionIdleTimeout = _options.Health.Interval * 2,
        })
        {
            Timeout = _options.Health.Timeout,
        };
#pragma warning restore CA2000
        using var timer = new PeriodicTimer(_options.Health.Interval);
        var round = new Task[_targets.Length];
        bool first = true;
        do
        {
            for (int i = 0; i < _targets.Length; i++)
            {
                round[i] = ProbeAndReportAsync(client, _targets[i].Backend, _targets[i].Url, first, stoppingToken);
            }

            await Task.WhenAll(round);
            if (stoppingToken.IsCancellationRequested)
            {
                return;
            }

            _health.OnFirstRoundProbed();
            first = false;
        }
        while (await WaitAsync(timer, stoppingToken));
    }

    private async Task ProbeAndReportAsync(HttpClient client, Backend backend, Uri url, bool first, CancellationToken stoppingToken)
    {
        (bool ready, string detail) = await ProbeAsync(client, backend, url, stoppingToken);
        if (!stoppingToken.IsCancellationRequested && (_health.Report(backend, ready) || first))
        {
            TunnelClientLog.HealthChanged(_logger, url.ToString(), ready ? "ready" : "unready", detail);
        }
    }

    private async Task<(bool Ready, string Detail)> ProbeAsync(HttpClient client, Backend backend, Uri url, CancellationToken stoppingToken)
    {
        try
        {
            // No caller here, so nothing to preserve: the backend's own Host, or the fixed one --host-header names (a named
            // virtual host answers its probe as it answers the requests).
            using var request = new HttpRequestMessage(HttpMethod.Get, url);
            if (_hostHeader.FixedHost is { } fixedHost)
            {
                request.Headers.Host = fixedHost;
            }

            using HttpResponseMessage response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, stoppingToken);
            int status = (int)response.StatusCode;
            return (status is >= 200 and < 400, $"status {status}");
        }
        catch (OperationCanceledException) when (!stoppingToken.IsCancellationRequested)
        {
            return (false, $"no answer within {(long)_options.Health.Timeout.TotalMilliseconds} ms");
        }
        catch (HttpRequestException ex)
        {
            return (false, ex.Message);
        }
        catch (OperationCanceledException)
        {
            return (backend.IsProbedReady, "stopping");
        }
    }

    private static async Task<bool> WaitAsync(PeriodicTimer timer, CancellationToken stoppingToken)
    {
        try
        {
            return await timer.WaitForNextTickAsync(stoppingToken);
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }
}
