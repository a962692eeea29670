using Tunnel2.Protocol.Heads;

namespace Tunnel2.UnitTests.Heads;

public sealed class HttpSyntaxTests
{
    [Theory]
    [InlineData("GET", true)]
    [InlineData("HEAD", true)]
    [InlineData("OPTIONS", true)]
    [InlineData("TRACE", true)]
    [InlineData("PUT", true)]
    [InlineData("DELETE", true)]
    [InlineData("POST", false)]
    [InlineData("PATCH", false)]
    [InlineData("CONNECT", false)]
    [InlineData("LOCK", false)]
    [InlineData("get", false)] // methods are case-sensitive (RFC 9110 §9.1): "get" is some other method
    public void Only_the_methods_rfc_9110_calls_idempotent_may_be_sent_again(string method, bool idempotent)
    {
        Assert.Equal(idempotent, HttpSyntax.IsIdempotentMethod(method));
    }

    [Theory]
    [InlineData("X-User-Id", true)]
    [InlineData("bad header", false)]
    [InlineData("", false)]
    public void A_field_name_is_a_token(string name, bool token)
    {
        Assert.Equal(token, HttpSyntax.IsToken(name));
    }
}
