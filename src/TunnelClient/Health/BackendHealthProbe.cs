using Microsoft.Extensions.Options;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;

namespace Tunnel2.TunnelClient.Health;

/// <summary>
/// Probes the backend's health path every interval: a 2xx or 3xx answer within the timeout is ready, anything else
/// (another status, a refused connection, no answer) is unready. One failed probe is enough, so the server stops
/// sending requests within one interval; one good probe brings the client back. Redirects are not followed.
/// </summary>
public sealed class BackendHealthProbe : BackgroundService
{
    private readonly BackendHealth _health;
    private readonly TunnelClientOptions _options;
    private readonly ILogger<BackendHealthProbe> _logger;
    private readonly Uri? _url;

    public BackendHealthProbe(BackendHealth health, IOptions<TunnelClientOptions> options, ILogger<BackendHealthProbe> logger)
    {
        _health = health;
        _options = options.Value;
        _logger = logger;
        if (health.IsProbed)
        {
            _url = new Uri(new Uri(_options.Backend), _options.HealthPath);
        }
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        if (_url is null)
        {
            return;
        }

        using var client = new HttpClient(new SocketsHttpHandler
        {
            AllowAutoRedirect = false,
            UseProxy = false,
            ConnectTimeout = _options.HealthTimeout,
            PooledConnectionIdleTimeout = _options.HealthInterval * 2,
        })
        {
            Timeout = _options.HealthTimeout,
        };
        using var timer = new PeriodicTimer(_options.HealthInterval);
        do
        {
            (bool ready, string detail) = await ProbeAsync(client, stoppingToken);
            if (stoppingToken.IsCancellationRequested)
            {
                return;
            }

            bool first = !_health.FirstProbe.IsCompleted;
            if (_health.Report(ready) || first)
            {
                TunnelClientLog.HealthChanged(_logger, _url.ToString(), ready ? "ready" : "unready", detail);
            }
        }
        while (await WaitAsync(timer, stoppingToken));
    }

    private async Task<(bool Ready, string Detail)> ProbeAsync(HttpClient client, CancellationToken stoppingToken)
    {
        try
        {
            using HttpResponseMessage response = await client.GetAsync(_url, HttpCompletionOption.ResponseHeadersRead, stoppingToken);
            int status = (int)response.StatusCode;
            return (status is >= 200 and < 400, $"status {status}");
        }
        catch (OperationCanceledException) when (!stoppingToken.IsCancellationRequested)
        {
            return (false, $"no answer within {(long)_options.HealthTimeout.TotalMilliseconds} ms");
        }
        catch (HttpRequestException ex)
        {
            return (false, ex.Message);
        }
        catch (OperationCanceledException)
        {
            return (_health.IsReady, "stopping");
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
