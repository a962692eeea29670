using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Tls;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// The first layer of an <c>https://</c> tunnel port: the TLS handshake, within the same timeout as the upgrade
/// request; the layers after it read and write through the TLS stream. On a plain port it passes the connection on.
/// </summary>
public sealed class TlsLayer
{
    private readonly ServerCertificate? _certificate;
    private readonly TimeSpan _timeout;
    private readonly AcceptanceEvents _events;

    public TlsLayer(IOptions<TunnelServerOptions> options, AcceptanceEvents events, ServerCertificate? certificate = null)
    {
        _events = events;
        _timeout = options.Value.Limits.HandshakeTimeout;
        bool tunnelHttps = ListenAddress.TryParse(options.Value.Listeners.TunnelUrl, out ListenAddress? address, out _) && address.IsHttps;
        _certificate = tunnelHttps ? certificate ?? throw new InvalidOperationException("An https:// tunnel port needs the server certificate.") : null;
    }

    /// <remarks>A plain port adds no state machine of its own to a connection that may stay idle for days.</remarks>
    public Task RunAsync(UplinkConnection connection, Func<UplinkConnection, Task> next) =>
        _certificate is null ? next(connection) : RunOverTlsAsync(connection, next);

    private async Task RunOverTlsAsync(UplinkConnection connection, Func<UplinkConnection, Task> next)
    {
        SslStream? tls = await AuthenticateAsync(connection.Stream, connection.Remote, connection.Stopping);
        if (tls is null)
        {
            return;
        }

        await using (tls)
        {
            connection.Stream = tls;
            await next(connection);
        }
    }

    /// <returns>The TLS stream over <paramref name="network"/>; null when the handshake failed (logged).</returns>
    private async Task<SslStream?> AuthenticateAsync(Stream network, IPEndPoint? remote, CancellationToken stopping)
    {
        var tls = new SslStream(network, leaveInnerStreamOpen: true);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(_timeout);
        try
        {
            await tls.AuthenticateAsServerAsync(
                new SslServerAuthenticationOptions
                {
                    ServerCertificateContext = _certificate!.Context,
                    ApplicationProtocols = [SslApplicationProtocol.Http11],
                },
                timeout.Token);
            return tls;
        }
        catch (Exception ex) when (ex is AuthenticationException or IOException or OperationCanceledException or SocketException)
        {
            await tls.DisposeAsync();
            string reason = ex is OperationCanceledException && !stopping.IsCancellationRequested
                ? $"no TLS handshake within {_timeout.TotalSeconds:0.###} s"
                : ex.Message;
            _events.TlsHandshakeFailed(remote?.Address, reason);
            return null;
        }
    }
}
