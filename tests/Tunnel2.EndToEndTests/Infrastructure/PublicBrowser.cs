using System.Net;
using System.Net.Sockets;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A browser's HTTP side for the apps behind the tunnel: keeps cookies, follows no redirects (the tests look at each),
/// and reaches any host name at the server's public port, the test's stand-in for DNS pointing <c>*.apps.test</c> at
/// the server.
/// </summary>
public sealed class PublicBrowser(int publicPort)
{
    public CookieContainer Cookies { get; } = new();

    public HttpClient Client() => new(Handler()) { Timeout = TimeSpan.FromSeconds(60) };

    public SocketsHttpHandler Handler() => new()
    {
        CookieContainer = Cookies,
        UseCookies = true,
        AllowAutoRedirect = false,
        ConnectCallback = async (_, cancellationToken) =>
        {
            var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            try
            {
                await socket.ConnectAsync(IPAddress.Loopback, publicPort, cancellationToken);
            }
            catch
            {
                socket.Dispose();
                throw;
            }

            return new NetworkStream(socket, ownsSocket: true);
        },
    };

    public string Cookie(Uri url, string name) =>
        Cookies.GetCookies(url)[name]?.Value ?? throw new InvalidOperationException($"No {name} cookie for {url}.");
}
