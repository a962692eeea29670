using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.Hosting.Sockets;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Diagnostics;
using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// The tunnel port: a plain TCP listener whose connections go to <see cref="UplinkAcceptor"/>. The server owns each
/// uplink socket, as the client does: no Kestrel transport pipe, upgrade stream or I/O queue between the socket and the
/// uplink's reader and writer. Kestrel keeps the public port.
/// </summary>
public sealed class UplinkListener(
    UplinkAcceptor acceptor,
    ServerEndpoints endpoints,
    IOptions<TunnelServerOptions> options,
    ILogger<UplinkListener> logger) : IHostedService, IDisposable
{
    private const int Backlog = 512;

    private readonly CancellationTokenSource _stopping = new();
    private readonly ConcurrentDictionary<Task, byte> _connections = new();
    private Socket? _listener;
    private Task? _accepting;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        TunnelServerOptions settings = options.Value;
        if (!ListenAddress.TryParse(settings.Listeners.TunnelUrl, out ListenAddress? address, out string? error))
        {
            throw new InvalidOperationException(error); // unreachable: validated at start
        }

        Socket listener;
        try
        {
            listener = SocketTransportOptions.CreateDefaultBoundListenSocket(address.EndPoint); // Kestrel's defaults (SO_REUSEADDR on Unix)
        }
        catch (SocketException ex) when (ex.SocketErrorCode == SocketError.AddressAlreadyInUse)
        {
            throw new IOException(ListenerOptions.BindFailure(settings.Listeners.TunnelUrl), ex); // reported as Kestrel's are
        }

        try
        {
            // Accepted sockets inherit all three: the unsent-bytes bound, a receive buffer set before the handshake (so
            // the TCP window scale fits it), and the segment size announced in it.
            UnsentBytesLimit.TryApply(listener, settings.Listeners.UnsentBytesLimit);
            UplinkReceiveBuffer.TryApply(listener, settings.Uplink.ReceiveBuffer);
            UplinkSegmentSize.TryApply(listener, settings.Uplink.SegmentSize);
            listener.Listen(Backlog);
        }
        catch
        {
            listener.Dispose();
            throw;
        }

        _listener = listener;
        endpoints.Tunnel = (IPEndPoint)listener.LocalEndPoint!;
        endpoints.TunnelIsHttps = address.IsHttps;
        _accepting = AcceptLoopAsync(listener);
        return Task.CompletedTask;
    }

    /// <summary>
    /// Stops accepting and ends the handshakes in progress. Uplinks have been drained and closed by then
    /// (<see cref="GracefulShutdown"/> runs first); any still running are waited for until the host's stop budget ends.
    /// </summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        await _stopping.CancelAsync();
        _listener?.Dispose();
        if (_accepting is not null)
        {
            await _accepting;
        }

        try
        {
            await Task.WhenAll(_connections.Keys).WaitAsync(cancellationToken);
        }
        catch (OperationCanceledException)
        {
            TunnelServerLog.ConnectionsLeftAtStop(logger, _connections.Count);
        }
    }

    public void Dispose()
    {
        // Disposed without a stop when the host failed to start (the public port in use): the accept loop must take
        // the closed socket for a stop, not log a failed accept after the one-line start error.
        _stopping.Cancel();
        _listener?.Dispose();
        _stopping.Dispose();
    }

    private async Task AcceptLoopAsync(Socket listener)
    {
        while (true)
        {
            Socket socket;
            try
            {
                socket = await listener.AcceptAsync(_stopping.Token);
            }
            catch (Exception ex) when (_stopping.IsCancellationRequested && ex is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }
            catch (SocketException ex)
            {
                // e.g. out of file descriptors, or a connection reset before it was accepted: keep serving the others.
                TunnelServerLog.AcceptFailed(logger, ex.SocketErrorCode, ex.Message);
                continue;
            }

            Track(acceptor.ServeAsync(socket, _stopping.Token));
        }
    }

    private void Track(Task connection)
    {
        _connections.TryAdd(connection, 0);
        connection.ContinueWith(
            static (done, state) =>
            {
                var (connections, log) = ((ConcurrentDictionary<Task, byte>, ILogger))state!;
                connections.TryRemove(done, out _);
                if (done.Exception?.GetBaseException() is { } failure)
                {
                    TunnelServerLog.ConnectionFailed(log, failure);
                }
            },
            (_connections, (ILogger)logger),
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
    }
}
