using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Options;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;

namespace Tunnel2.TunnelClient.Backends;

/// <summary>
/// At start, opens a connection to each HTTP backend, so that one that is down is noticed before the first visitor
/// gets a 502: one warning with its address, then a new try after 1, 2, 4 … (at most 30) seconds until it answers,
/// which is logged too. The client serves all along; this only tells. The TCP target is not dialled: a connection that
/// sends nothing is an error in a database's or an SSH server's log (its callers' failures are logged as they come).
/// </summary>
public sealed class BackendStartCheck(IOptions<TunnelClientOptions> options, ILogger<BackendStartCheck> logger) : BackgroundService
{
    private static readonly TimeSpan MaxRetryDelay = TimeSpan.FromSeconds(30);

    /// <summary>What this client connects to: each backend's URL (when it serves HTTP) and the TCP target, with their host and port.</summary>
    internal static IEnumerable<(string Name, string Host, int Port, bool IsTcp)> TargetsOf(TunnelClientOptions settings)
    {
        if (settings.Tcp.ServesHttp)
        {
            foreach (BackendAddress backend in BackendAddress.ParseList(settings.Backends.Urls, out _) ?? [])
            {
                string name = backend.Url.AbsolutePath == "/" ? backend.Url.GetLeftPart(UriPartial.Authority) : backend.Url.ToString();
                yield return (name, backend.Url.IdnHost, backend.Url.Port, false);
            }
        }

        if (TcpTarget.Parse(settings.Tcp.Target, out _) is { } tcp)
        {
            yield return ($"tcp://{tcp}", tcp.Host, tcp.Port, true);
        }
    }

    protected override Task ExecuteAsync(CancellationToken stoppingToken) =>
        Task.WhenAll(TargetsOf(options.Value).Where(target => !target.IsTcp).Select(target => WatchAsync(target.Name, target.Host, target.Port, stoppingToken)));

    private async Task WatchAsync(string name, string host, int port, CancellationToken stoppingToken)
    {
        TimeSpan delay = TimeSpan.FromSeconds(1);
        bool warned = false;
        while (!stoppingToken.IsCancellationRequested)
        {
            string? failure = await TryConnectAsync(host, port, stoppingToken);
            if (failure is null)
            {
                if (warned)
                {
                    TunnelClientLog.BackendAnswers(logger, name);
                }

                return;
            }

            if (!warned)
            {
                TunnelClientLog.BackendDown(logger, name, failure);
                warned = true;
            }

            try
            {
                await Task.Delay(delay, stoppingToken);
            }
            catch (OperationCanceledException)
            {
                return;
            }

            delay = TimeSpan.FromTicks(Math.Min(delay.Ticks * 2, MaxRetryDelay.Ticks));
        }
    }

    /// <returns>Null when a connection opened; else why not.</returns>
    private async Task<string?> TryConnectAsync(string host, int port, CancellationToken stoppingToken)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stoppingToken);
        timeout.CancelAfter(options.Value.ConnectTimeout);
        using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        try
        {
            await socket.ConnectAsync(IPAddress.TryParse(host, out IPAddress? ip) ? new IPEndPoint(ip, port) : new DnsEndPoint(host, port), timeout.Token);
            return null;
        }
        catch (SocketException ex)
        {
            return ex.SocketErrorCode == SocketError.ConnectionRefused ? "connection refused" : ex.Message;
        }
        catch (OperationCanceledException) when (!stoppingToken.IsCancellationRequested)
        {
            return $"no answer within {options.Value.ConnectTimeout.TotalSeconds:0.#} s";
        }
    }
}
