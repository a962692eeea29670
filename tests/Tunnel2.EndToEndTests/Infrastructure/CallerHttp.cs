namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>The HttpClient a public caller uses in tests that start their own stack.</summary>
public static class CallerHttp
{
    public static HttpClient Create() => new(new SocketsHttpHandler { UseCookies = false, AllowAutoRedirect = false, MaxConnectionsPerServer = 100 })
    {
        Timeout = TimeSpan.FromSeconds(60),
    };
}
