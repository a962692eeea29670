using Tunnel2.Balancing.Affinity;
using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Backends;

namespace Tunnel2.UnitTests.Backends;

/// <summary>
/// The client's side of affinity: the key a request head brings, and the cookie that keeps a caller on the backend that
/// answered.
/// </summary>
public sealed class HeadAffinityRequestTests
{
    [Fact]
    public void The_key_is_the_cookie_in_any_cookie_field_the_first_header_or_the_forwarded_address()
    {
        var request = new HeadAffinityRequest(new RequestHead("GET", "/",
        [
            new HeaderField("Cookie", "theme=dark"),
            new HeaderField("cookie", "t2=k1"),
            new HeaderField("X-User", "u7"),
            new HeaderField("x-user", "u8"),
            new HeaderField("X-Forwarded-For", "192.0.2.9"),
        ]));

        Assert.Equal("k1", new CookieAffinity("t2").KeyOf(request));
        Assert.Null(new CookieAffinity("other").KeyOf(request));
        Assert.Equal("u7", new HeaderAffinity("X-User").KeyOf(request));
        Assert.Equal("192.0.2.9", ClientAddressAffinity.Instance.KeyOf(request));
    }

    [Theory]
    [InlineData(null, "; Path=/; HttpOnly; SameSite=Lax")]
    [InlineData("http", "; Path=/; HttpOnly; SameSite=Lax")]
    [InlineData("https", "; Path=/; HttpOnly; SameSite=Lax; Secure")]
    public void The_cookie_is_for_the_whole_origin_and_secure_when_the_caller_came_over_TLS(string? forwardedProto, string attributes)
    {
        List<HeaderField> headers = forwardedProto is null ? [] : [new HeaderField("X-Forwarded-Proto", forwardedProto)];
        var member = new Balancing.TestMember("backend");

        string? cookie = new CookieAffinity("Tunnel2-Backend").CookieFor(new HeadAffinityRequest(new RequestHead("GET", "/", headers)), "old", member);

        Assert.Equal("Tunnel2-Backend=" + member.AffinityKey + attributes, cookie);
    }
}
