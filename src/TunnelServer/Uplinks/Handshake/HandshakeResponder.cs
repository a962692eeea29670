using System.IO.Pipelines;
using System.Net.Sockets;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.TunnelServer.Uplinks.Handshake;

/// <summary>Sends the server's answer to an upgrade request: the 101 of an accepted login, or a refusal and a graceful close.</summary>
/// <param name="policies">Each session's policy, for its own host names (the public URL names the first); null: none has any.</param>
public sealed class HandshakeResponder(UplinkSettings settings, ServerEndpoints endpoints, IOptions<ProxyEntryOptions> proxyOptions,
    SessionPolicies? policies = null)
{
    /// <summary>How long a refused client gets to take the answer and close before the server closes anyway.</summary>
    private static readonly TimeSpan CloseGrace = TimeSpan.FromSeconds(1);

    private readonly string? _hostSuffix = proxyOptions.Value.Routing.HostSuffix;

    /// <param name="host">The request's Host, for the session's public address under a host suffix.</param>
    /// <param name="tcpAddress">A TCP login's public address (its lease on its session's TCP port, as the host it dialled names it), which the 101 names.</param>
    public async Task SwitchProtocolsAsync(PipeWriter output, HandshakeAcceptance accepted, string? host, CancellationToken deadline, string? tcpAddress = null)
    {
        IReadOnlyList<string> ownHosts = policies?.For(accepted.Session).Hosts ?? [];
        string publicUrl = PublicSessionUrl.For(accepted.Session, endpoints.PublicUrl, _hostSuffix, host, ownHosts.Count > 0 ? ownHosts[0] : null);
        await output.WriteAsync(HandshakeAnswer.SwitchingProtocols(accepted, settings, publicUrl, tcpAddress), deadline);
    }

    /// <summary>
    /// Sends a refusal and closes gracefully: the sending side first, then whatever the client still sends is read and
    /// dropped for a moment, so that closing with unread bytes does not reset the connection before the answer is read.
    /// </summary>
    /// <param name="instance">The request target, for the problem's <c>instance</c>.</param>
    public static async Task RefuseAndCloseAsync(Socket socket, DuplexPipe transport, HandshakeRefusal refusal, string instance)
    {
        using var grace = new CancellationTokenSource(CloseGrace);
        try
        {
            await transport.Output.WriteAsync(HandshakeAnswer.Refusal(refusal, instance), grace.Token);
            socket.Shutdown(SocketShutdown.Send);
            while (true)
            {
                ReadResult read = await transport.Input.ReadAsync(grace.Token);
                transport.Input.AdvanceTo(read.Buffer.End);
                if (read.IsCompleted)
                {
                    return;
                }
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or IOException or SocketException or ObjectDisposedException)
        {
            // The client did not close in time, or already did: the connection closes either way.
        }
    }
}
