using System.Net;
using System.Net.Security;
using System.Net.Sockets;

namespace Tunnel2.Loops.Guard;

/// <summary>
/// The blocking calls the processes make around their relays (name resolution, connects through the runtime's sockets,
/// TLS handshakes), each guarded by <see cref="LoopGuard.AssertNotOnLoop"/>. The processes call these instead of the
/// runtime's methods wherever a loop is in play, so a call that strays onto a loop thread fails in its first test.
/// </summary>
public static class GuardedCalls
{
    public static Task<IPAddress[]> ResolveAsync(string host, CancellationToken cancellationToken)
    {
        LoopGuard.AssertNotOnLoop("DNS resolution");
        return Dns.GetHostAddressesAsync(host, cancellationToken);
    }

    public static ValueTask ConnectAsync(Socket socket, EndPoint to, CancellationToken cancellationToken)
    {
        LoopGuard.AssertNotOnLoop("Socket connect");
        return socket.ConnectAsync(to, cancellationToken);
    }

    public static Task AuthenticateAsClientAsync(SslStream tls, SslClientAuthenticationOptions options, CancellationToken cancellationToken)
    {
        LoopGuard.AssertNotOnLoop("TLS handshake");
        return tls.AuthenticateAsClientAsync(options, cancellationToken);
    }

    public static Task AuthenticateAsServerAsync(SslStream tls, SslServerAuthenticationOptions options, CancellationToken cancellationToken)
    {
        LoopGuard.AssertNotOnLoop("TLS handshake");
        return tls.AuthenticateAsServerAsync(options, cancellationToken);
    }
}
