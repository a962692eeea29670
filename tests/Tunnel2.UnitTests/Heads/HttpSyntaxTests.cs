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

    [Theory]
    [InlineData("keep-alive, Upgrade", "upgrade", true)]
    [InlineData(" close ", "close", true)]
    [InlineData("keep-alive,close", "CLOSE", true)]
    [InlineData("keep-alive", "close", false)]
    [InlineData("closed, x-close", "close", false)]
    [InlineData("", "close", false)]
    [InlineData(null, "close", false)]
    public void A_comma_list_lists_a_token_by_its_whole_element_in_any_case(string? list, string token, bool listed)
    {
        Assert.Equal(listed, HttpSyntax.ListsToken(list, token));
    }
}
