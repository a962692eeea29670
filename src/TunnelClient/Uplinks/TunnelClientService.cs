using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using Microsoft.Extensions.Options;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Health;
using Tunnel2.TunnelClient.Relay;
using Tunnel2.TunnelClient.Tls;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>
/// Keeps the client's uplinks open (<see cref="ClientUplinkOptions.Count"/> to each server of
/// <see cref="TunnelClientOptions.Server"/>), each on its own: dial, run until it drops, wait a jittered backoff, dial
/// again. A refused token or an untrusted certificate ends them all. All of them share one backend relay, so the
/// client's concurrency limit stays one limit however many servers it serves.
/// </summary>
public sealed class TunnelClientService : BackgroundService
{
    /// <summary>The exit code when the server's TLS certificate is not trusted.</summary>
    public const int CertificateRefusedExitCode = 4;

    private readonly UplinkDialer _dialer;
    private readonly TunnelClientOptions _options;
    private readonly TunnelClientStatus _status;
    private readonly TunnelClientMetrics _metrics;
    private readonly IHostApplicationLifetime _lifetime;
    private readonly ILogger<TunnelClientService> _logger;
    private readonly ReconnectBackoff _backoff;
    private readonly BackendRelay _relay;
    private readonly BackendHealth _health;
    private readonly IServerResolver _resolver;
    private readonly Tcp.TcpForwardingNotice _tcpForwarding;
    private int _nextSlot;

    public TunnelClientService(
        UplinkDialer dialer,
        IServerResolver resolver,
        BackendRelay relay,
        BackendHealth health,
        IOptions<TunnelClientOptions> options,
        TunnelClientStatus status,
        TunnelClientMetrics metrics,
        IHostApplicationLifetime lifetime,
        ILogger<TunnelClientService> logger)
    {
        _dialer = dialer;
        _resolver = resolver;
        _relay = relay;
        _health = health;
        _options = options.Value;
        _status = status;
        _metrics = metrics;
        _lifetime = lifetime;
        _logger = logger;
        _backoff = new ReconnectBackoff(_options.Uplink.ReconnectMinDelay, _options.Uplink.ReconnectMaxDelay);
        _tcpForwarding = new Tcp.TcpForwardingNotice(logger);
    }

    protected override Task ExecuteAsync(CancellationToken stoppingToken)
    {
        Tunnel2.Protocol.Buffers.BufferPools.SetTrimPeriod(_options.Uplink.BufferTrimPeriod); // the pools are the process's
        IReadOnlyList<Uri> servers = ServerList.Parse(_options.Server, out _) ?? []; // validated at start
        var jobs = new List<Task>(servers.Count * _options.Uplink.Count);
        foreach (Uri server in servers)
        {
            if (_options.Uplink.ResolveInterval > TimeSpan.Zero && server.HostNameType == UriHostNameType.Dns)
            {
                jobs.Add(KeepResolvedServerAsync(server, stoppingToken));
                continue;
            }

            for (int i = 0; i < _options.Uplink.Count; i++)
            {
                jobs.Add(KeepUplinkAsync(new UplinkTarget(server), Interlocked.Increment(ref _nextSlot) - 1, stoppingToken));
            }
        }

        return Task.WhenAll(jobs);
    }

    /// <summary>
    /// A name for a cluster's nodes (<see cref="ClientUplinkOptions.ResolveInterval"/>): resolves it every interval and
    /// keeps <see cref="ClientUplinkOptions.Count"/> uplinks to each address it has. An address that appears gets
    /// uplinks of its own; one that is gone has its uplinks drained, as a stop would. A failed lookup keeps what there is.
    /// </summary>
    private async Task KeepResolvedServerAsync(Uri server, CancellationToken stoppingToken)
    {
        var nodes = new Dictionary<IPAddress, ResolvedNode>();
        var leaving = new List<Task>();
        try
        {
            while (!stoppingToken.IsCancellationRequested)
            {
                IPAddress[]? addresses = null;
                try
                {
                    addresses = await _resolver.ResolveAsync(server.Host, stoppingToken);
                }
                catch (Exception ex) when (ex is SocketException or ArgumentException || (ex is OperationCanceledException && !stoppingToken.IsCancellationRequested))
                {
                    TunnelClientLog.ResolveFailed(_logger, server.Host, nodes.Count, ex.Message);
                }

                if (addresses is not null)
                {
                    ServerAddressChange change = ServerAddressChange.Between(nodes.Keys, addresses);
                    foreach (IPAddress gone in change.Removed)
                    {
                        TunnelClientLog.NodeLeft(_logger, server.Host, gone.ToString());
                        nodes.Remove(gone, out ResolvedNode? node);
                        leaving.Add(node!.Leave());
                    }

                    foreach (IPAddress added in change.Added)
                    {
                        TunnelClientLog.NodeFound(_logger, server.Host, added.ToString(), _options.Uplink.Count);
                        nodes[added] = StartNode(new UplinkTarget(server, added), stoppingToken);
                    }
                }

                await DelayAsync(_options.Uplink.ResolveInterval, stoppingToken);
            }
        }
        finally
        {
            foreach (ResolvedNode node in nodes.Values)
            {
                leaving.Add(node.Uplinks);
            }

            await Task.WhenAll(leaving);
        }
    }

    private ResolvedNode StartNode(UplinkTarget target, CancellationToken stoppingToken)
    {
#pragma warning disable CA2000 // ResolvedNode owns it: Leave cancels it and disposes it once the uplinks have ended
        var leave = CancellationTokenSource.CreateLinkedTokenSource(stoppingToken);
#pragma warning restore CA2000
        var uplinks = new Task[_options.Uplink.Count];
        for (int i = 0; i < uplinks.Length; i++)
        {
            uplinks[i] = KeepUplinkAsync(target, Interlocked.Increment(ref _nextSlot) - 1, leave.Token);
        }

        return new ResolvedNode(leave, Task.WhenAll(uplinks));
    }

    /// <summary>The uplinks to one address of a resolved name, and the way to make them drain and end.</summary>
    private sealed class ResolvedNode(CancellationTokenSource leave, Task uplinks)
    {
        public Task Uplinks => uplinks;

        /// <returns>The uplinks, ending once they have drained.</returns>
        public async Task Leave()
        {
            await leave.CancelAsync();
            await uplinks.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            leave.Dispose();
        }
    }

    /// <param name="slot">Unique over all uplinks, so two names for one node never replace each other's uplinks.</param>
    private async Task KeepUplinkAsync(UplinkTarget target, int slot, CancellationToken stoppingToken)
    {
        Uri server = target.Server;
        int failedAttempts = 0;
        while (!stoppingToken.IsCancellationRequested)
        {
            string reason;
            try
            {
                await using (DialedUplink dialed = await _dialer.ConnectAsync(target, slot, stoppingToken))
                {
                    failedAttempts = 0;
                    reason = await ServeAsync(target, dialed, stoppingToken);
                }

                if (stoppingToken.IsCancellationRequested)
                {
                    return;
                }

                TunnelClientLog.Disconnected(_logger, target.Label, reason);
            }
            catch (UplinkRefusedException refused) when (refused.IsPermanent)
            {
                TunnelClientLog.LoginRefused(_logger, refused.Detail);
                StopRefused(refused.Message, exitCode: 3);
                return;
            }
            catch (ServerCertificateRejectedException rejected)
            {
                TunnelClientLog.CertificateRefused(_logger, server.OriginalString, rejected.Reason);
                StopRefused(rejected.Message, CertificateRefusedExitCode);
                return;
            }
            catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception ex) when (ex is UplinkRefusedException or IOException or System.Net.Sockets.SocketException
                                           or OperationCanceledException or InvalidDataException or AuthenticationException
                                           or System.Net.WebSockets.WebSocketException or HttpRequestException)
            {
                await RetryAfterFailureAsync(target, ex, failedAttempts++, stoppingToken);
                continue;
            }

            // A connection that was up and dropped: come back quickly, but jittered.
            await DelayAsync(_backoff.NextDelay(failedAttempts++, Random.Shared), stoppingToken);
        }
    }

    /// <summary>Reports the uplink up, runs it until it drops or the client stops, then reports it down.</summary>
    /// <returns>Why the uplink closed.</returns>
    private async Task<string> ServeAsync(UplinkTarget target, DialedUplink dialed, CancellationToken stoppingToken)
    {
        string reason;
        _status.OnConnected();
        _metrics.UplinkUp(target.Label);
        try
        {
            TunnelClientLog.Connected(_logger, target.Label, _options.Session, Served);
            if (dialed.PublicUrl is { } publicUrl && _options.Tcp.ServesHttp && _status.OnPublicUrl(publicUrl))
            {
                TunnelClientLog.PublicUrl(_logger, publicUrl, _options.Backends.Urls);
                ForwardingLine.Write(publicUrl, _options.Backends.Urls);
            }

            _tcpForwarding.OnConnected(dialed.TcpAddress, _options.Tcp.Target);

            await RunUntilStoppedAsync(target, dialed.Uplink, stoppingToken);
        }
        finally
        {
            reason = dialed.Uplink.CloseReason ?? "closed";
            _status.OnDisconnected(reason);
            _metrics.UplinkDown(target.Label);
        }

        return reason;
    }

    /// <summary>What the session is served from, as the user gave it: the backend(s), the TCP target, or both (a TCP-only client names no backend).</summary>
    private string Served => string.Join(", ", Backends.BackendStartCheck.TargetsOf(_options).Select(target => target.Name));

    /// <summary>A refusal that retrying cannot cure (a bad token, an untrusted certificate): the client stops with this exit code.</summary>
    private void StopRefused(string message, int exitCode)
    {
        _status.OnConnectFailed(message);
        _status.ExitCode = exitCode;
        _lifetime.StopApplication();
    }

    /// <summary>A connect that failed: waits the next backoff delay before the caller tries again.</summary>
    private async Task RetryAfterFailureAsync(UplinkTarget target, Exception ex, int failedAttempts, CancellationToken stoppingToken)
    {
        string reason = ex is OperationCanceledException ? "connect timed out" : ex.Message;
        _status.OnConnectFailed(reason);
        TimeSpan failedDelay = _backoff.NextDelay(failedAttempts, Random.Shared);
        TunnelClientLog.ConnectFailed(_logger, target.Label, reason, (long)failedDelay.TotalMilliseconds);
        await DelayAsync(failedDelay, stoppingToken);
    }

    /// <summary>
    /// Runs the uplink until it drops. A stop does not cut it: the client announces it is leaving (GoAway), lets the
    /// requests in flight finish up to <see cref="TunnelClientOptions.DrainTimeout"/>, then closes it.
    /// </summary>
    private async Task RunUntilStoppedAsync(UplinkTarget target, Protocol.Multiplexing.Uplink uplink, CancellationToken stoppingToken)
    {
        Task run = uplink.RunAsync(CancellationToken.None); // a stop drains the uplink below, it does not cut it
        using HealthReports reports = ReportHealth(uplink);
        var stopped = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using (stoppingToken.Register(static state => ((TaskCompletionSource)state!).TrySetResult(), stopped))
        {
            await Task.WhenAny(run, stopped.Task);
        }

        if (!run.IsCompleted)
        {
            TunnelClientLog.Draining(_logger, target.Label, uplink.ActiveStreamCount, (long)_options.DrainTimeout.TotalMilliseconds);
            if (await uplink.DrainAsync(_options.DrainTimeout))
            {
                TunnelClientLog.Drained(_logger);
            }
            else
            {
                TunnelClientLog.DrainTimedOut(_logger, _relay.UpgradedStreams);
            }
        }

        await run;
    }

    /// <summary>
    /// Passes every change of the backend's health to the server over this uplink; the state now is sent once more at
    /// once, since it may have changed between the login that reported it and this subscription.
    /// </summary>
    private HealthReports ReportHealth(Protocol.Multiplexing.Uplink uplink)
    {
        if (!_health.IsProbed)
        {
            return default;
        }

        if (!uplink.TrySendHealth(_health.IsReady))
        {
            TunnelClientLog.HealthNotSupported(_logger, uplink.Settings.ProtocolVersion);
            return default;
        }

        Action<bool> send = ready => uplink.TrySendHealth(ready);
        _health.Changed += send;
        return new HealthReports(_health, send);
    }

    /// <summary>Ends a subscription of <see cref="ReportHealth"/> when its uplink is done.</summary>
    private readonly struct HealthReports(BackendHealth? health, Action<bool>? send) : IDisposable
    {
        public void Dispose()
        {
            if (health is not null)
            {
                health.Changed -= send;
            }
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
