using Tunnel2.Protocol.Heads;

namespace Tunnel2.UnitTests.Heads;

public sealed class HttpSyntaxTests
{
    [Theory]
    [InlineData("X-User-Id", true)]
    [InlineData("bad header", false)]
    [InlineData("", false)]
    public void A_field_name_is_a_token(string name, bool token)
    {
        Assert.Equal(token, HttpSyntax.IsToken(name));
    }
}
