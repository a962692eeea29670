using System.Net;
using System.Net.Sockets;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>The HttpClient a public caller uses in tests that start their own stack.</summary>
public static class CallerHttp
{
    public static HttpClient Create() => new(new SocketsHttpHandler { UseCookies = false, AllowAutoRedirect = false, MaxConnectionsPerServer = 100 })
    {
        Timeout = TimeSpan.FromSeconds(60),
    };

    /// <summary>A caller whose connections come from <paramref name="address"/> (another 127.0.0.0/8 address: a proxy, an edge).</summary>
    public static HttpClient From(IPAddress address) => new(new SocketsHttpHandler
    {
        UseCookies = false,
        AllowAutoRedirect = false,
        ConnectCallback = async (context, cancel) =>
        {
            var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            try
            {
                socket.Bind(new IPEndPoint(address, 0));
                await socket.ConnectAsync(context.DnsEndPoint, cancel);
                return new NetworkStream(socket, ownsSocket: true);
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        },
    })
    {
        Timeout = TimeSpan.FromSeconds(60),
    };
}
