using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Relay.Rewriting;

namespace Tunnel2.UnitTests.Relay.Rewriting;

public sealed class PublicPathRewriterTests
{
    private static readonly PublicPathRewriter Rewriter = new(new Uri("http://127.0.0.1:12007"));

    private static RequestHead Request(string prefix = "/session/abc", bool origin = true) => new("GET", "/", origin
        ? [new("X-Forwarded-Proto", "https"), new("X-Forwarded-Host", "pub.example"), new("X-Forwarded-Prefix", prefix)]
        : [new("X-Forwarded-Prefix", prefix)]);

    private static string Rewritten(string name, string value, RequestHead? request = null)
    {
        List<HeaderField> fields = [new(name, value)];
        Rewriter.Rewrite(fields, request ?? Request());
        return fields.Single().Value;
    }

    [Theory]
    [InlineData("http://127.0.0.1:12007/index.html", "https://pub.example/session/abc/index.html")]
    [InlineData("http://127.0.0.1:12007", "https://pub.example/session/abc/")]
    [InlineData("http://127.0.0.1:12007?x=1", "https://pub.example/session/abc/?x=1")]
    [InlineData("HTTP://127.0.0.1:12007/a%20b?q=%2F#f", "https://pub.example/session/abc/a%20b?q=%2F#f")]
    [InlineData("/login?next=/x", "/session/abc/login?next=/x")]
    [InlineData("/", "/session/abc/")]
    [InlineData("/session/abc/already", "/session/abc/already")]
    [InlineData("/session/abc?x", "/session/abc?x")]
    [InlineData("/session/abcdef", "/session/abc/session/abcdef")]
    [InlineData("next.html", "next.html")]
    [InlineData("../up", "../up")]
    [InlineData("//cdn.example/x", "//cdn.example/x")]
    [InlineData("http://127.0.0.1:9999/x", "http://127.0.0.1:9999/x")]
    [InlineData("https://127.0.0.1:12007/x", "https://127.0.0.1:12007/x")]
    [InlineData("http://other.example/x", "http://other.example/x")]
    [InlineData("http://pub.example/index.html", "https://pub.example/session/abc/index.html")]
    [InlineData("https://pub.example/login?next=/x", "https://pub.example/session/abc/login?next=/x")]
    [InlineData("https://pub.example/session/abc/x", "https://pub.example/session/abc/x")]
    [InlineData("https://pub.example:8443/x", "https://pub.example:8443/x")]
    [InlineData("ftp://pub.example/x", "ftp://pub.example/x")]
    public void A_Location_to_the_backends_origin_the_callers_host_or_root_moves_under_the_public_prefix_and_any_other_stays(string location, string expected)
    {
        Assert.Equal(expected, Rewritten("Location", location));
        Assert.Equal(expected, Rewritten("content-location", location));
    }

    [Fact]
    public void Without_the_public_origin_a_backend_URL_becomes_root_relative_under_the_prefix()
    {
        Assert.Equal("/session/abc/index.html", Rewritten("Location", "http://127.0.0.1:12007/index.html", Request(origin: false)));
    }

    [Theory]
    [InlineData("5; url=/next", "5; url=/session/abc/next")]
    [InlineData("0;URL='http://127.0.0.1:12007/x'", "0;URL='https://pub.example/session/abc/x'")]
    [InlineData("1; url=\"/q?a=1\"", "1; url=\"/session/abc/q?a=1\"")]
    [InlineData("5", "5")]
    [InlineData("5; url=elsewhere.html", "5; url=elsewhere.html")]
    public void A_Refresh_URL_is_rewritten_as_a_Location_is(string refresh, string expected)
    {
        Assert.Equal(expected, Rewritten("Refresh", refresh));
    }

    [Theory]
    [InlineData("a=1; Path=/", "a=1; Path=/session/abc/")]
    [InlineData("b=2; HttpOnly; path=/app; Secure", "b=2; HttpOnly; path=/session/abc/app; Secure")]
    [InlineData("e=5; Domain=x; Path= /y", "e=5; Domain=x; Path= /session/abc/y")]
    [InlineData("c=3", "c=3")]
    [InlineData("c=3; Secure", "c=3; Secure")]
    [InlineData("d=4; Path=/session/abc/x", "d=4; Path=/session/abc/x")]
    [InlineData("f=path=/x; SameSite=Lax", "f=path=/x; SameSite=Lax")]
    public void A_cookie_Path_gets_the_prefix_so_it_stays_with_its_session(string setCookie, string expected)
    {
        Assert.Equal(expected, Rewritten("Set-Cookie", setCookie));
    }

    [Fact]
    public void Each_field_is_rewritten_in_place_and_the_others_keep_their_order_and_values()
    {
        List<HeaderField> fields =
        [
            new("Set-Cookie", "a=1; Path=/"),
            new("Content-Type", "text/html"),
            new("Set-Cookie", "b=2; Path=/x"),
            new("Location", "/x"),
            new("Link", "</style.css>; rel=preload"),
        ];

        Rewriter.Rewrite(fields, Request());

        Assert.Equal(
            [new("Set-Cookie", "a=1; Path=/session/abc/"), new("Content-Type", "text/html"), new("Set-Cookie", "b=2; Path=/session/abc/x"),
             new("Location", "/session/abc/x"), new("Link", "</style.css>; rel=preload")],
            fields);
    }

    [Fact]
    public void Without_a_prefix_nothing_is_rewritten()
    {
        List<HeaderField> fields = [new("Location", "/x"), new("Set-Cookie", "a=1; Path=/"), new("Location", "http://127.0.0.1:12007/y")];

        Rewriter.Rewrite(fields, Request(prefix: ""));

        Assert.Equal([new("Location", "/x"), new("Set-Cookie", "a=1; Path=/"), new("Location", "http://127.0.0.1:12007/y")], fields);
    }
}
