using Microsoft.Extensions.Options;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>Keeps one uplink open: dial, run until it drops, wait a jittered backoff, dial again. A refused token ends it.</summary>
public sealed class TunnelClientService : BackgroundService
{
    private readonly UplinkDialer _dialer;
    private readonly TunnelClientOptions _options;
    private readonly TunnelClientStatus _status;
    private readonly TunnelClientMetrics _metrics;
    private readonly IHostApplicationLifetime _lifetime;
    private readonly ILogger<TunnelClientService> _logger;
    private readonly ReconnectBackoff _backoff;

    public TunnelClientService(
        UplinkDialer dialer,
        IOptions<TunnelClientOptions> options,
        TunnelClientStatus status,
        TunnelClientMetrics metrics,
        IHostApplicationLifetime lifetime,
        ILogger<TunnelClientService> logger)
    {
        _dialer = dialer;
        _options = options.Value;
        _status = status;
        _metrics = metrics;
        _lifetime = lifetime;
        _logger = logger;
        _backoff = new ReconnectBackoff(_options.ReconnectMinDelay, _options.ReconnectMaxDelay);
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        int failedAttempts = 0;
        while (!stoppingToken.IsCancellationRequested)
        {
            string reason;
            try
            {
                await using (DialedUplink dialed = await _dialer.ConnectAsync(stoppingToken))
                {
                    failedAttempts = 0;
                    _status.OnConnected();
                    _metrics.Connected();
                    TunnelClientLog.Connected(_logger, _options.Server, _options.Session, _options.Backend);
                    await dialed.Uplink.RunAsync(stoppingToken);
                    reason = dialed.Uplink.CloseReason ?? "closed";
                }

                _status.OnDisconnected(reason);
                if (stoppingToken.IsCancellationRequested)
                {
                    return;
                }

                TunnelClientLog.Disconnected(_logger, _options.Server, reason);
            }
            catch (UplinkRefusedException refused) when (refused.IsAuthenticationFailure)
            {
                TunnelClientLog.TokenRefused(_logger, refused.StatusCode, refused.Detail);
                _status.OnDisconnected(refused.Message);
                _status.ExitCode = 3;
                _lifetime.StopApplication();
                return;
            }
            catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception ex) when (ex is UplinkRefusedException or IOException or System.Net.Sockets.SocketException
                                           or OperationCanceledException or InvalidDataException)
            {
                reason = ex is OperationCanceledException ? "connect timed out" : ex.Message;
                _status.OnDisconnected(reason);
                TimeSpan failedDelay = _backoff.NextDelay(failedAttempts++, Random.Shared);
                TunnelClientLog.ConnectFailed(_logger, _options.Server, reason, (long)failedDelay.TotalMilliseconds);
                await DelayAsync(failedDelay, stoppingToken);
                continue;
            }

            // A connection that was up and dropped: come back quickly, but jittered.
            await DelayAsync(_backoff.NextDelay(failedAttempts++, Random.Shared), stoppingToken);
        }
    }

    private static async Task DelayAsync(TimeSpan delay, CancellationToken stoppingToken)
    {
        try
        {
            await Task.Delay(delay, stoppingToken);
        }
        catch (OperationCanceledException)
        {
            // Stopping.
        }
    }
}
