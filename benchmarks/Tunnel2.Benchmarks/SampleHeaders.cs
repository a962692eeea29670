using Tunnel2.Protocol.Heads;

namespace Tunnel2.Benchmarks;

/// <summary>Headers of the size curl, a browser and Kestrel send: what a tunnel's heads usually carry.</summary>
internal static class SampleHeaders
{
    public static List<HeaderField> Request() =>
    [
        new("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
        new("Accept-Encoding", "gzip, deflate, br"),
        new("Accept-Language", "en-GB,en;q=0.9"),
        new("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36"),
        new("Cookie", "session=3f1c2a9e8b7d6c5a4f3e2d1c0b9a8f7e; theme=dark"),
        new("X-Forwarded-For", "203.0.113.7"),
        new("X-Forwarded-Proto", "http"),
        new("X-Forwarded-Host", "tunnel.example:12000"),
        new("X-Forwarded-Prefix", "/session/22222222-2222-2222-2222-222222222222"),
    ];

    public static List<HeaderField> Response() =>
    [
        new("Content-Type", "application/json; charset=utf-8"),
        new("Date", "Mon, 23 Nov 2026 08:00:00 GMT"),
        new("Content-Length", "312"),
        new("Cache-Control", "no-store"),
        new("Set-Cookie", "a=1; Path=/; HttpOnly"),
        new("Set-Cookie", "b=2; Path=/; HttpOnly"),
    ];
}
