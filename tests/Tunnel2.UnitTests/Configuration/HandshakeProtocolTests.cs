using Tunnel2.Protocol.Handshake;

namespace Tunnel2.UnitTests.Configuration;

public sealed class HandshakeProtocolTests
{
    [Theory]
    [InlineData("3", 3)]
    [InlineData("4,3", 4)]
    [InlineData("4, 3", 4)]
    [InlineData("5, 3", 5)]
    [InlineData("5, 4, 3", 5)]
    [InlineData("6, 3", 3)]
    [InlineData(" 3 ", 3)]
    [InlineData("3,3", 3)]
    [InlineData("abc, 3", 3)]
    [InlineData("2, 3", 3)]
    [InlineData("1", 0)]
    [InlineData("2", 0)]
    [InlineData("4", 4)]
    [InlineData("5", 5)]
    [InlineData("6", 0)]
    [InlineData("", 0)]
    [InlineData("   ", 0)]
    [InlineData(null, 0)]
    [InlineData("abc", 0)]
    [InlineData(",", 0)]
    [InlineData("-1", 0)]
    [InlineData("0", 0)]
    [InlineData("99999999999999999999", 0)]
    public void Negotiates_the_highest_common_version_or_0(string? offered, int expected)
    {
        Assert.Equal(expected, HandshakeProtocol.NegotiateVersion(offered));
    }

    [Fact]
    public void The_current_version_is_supported()
    {
        Assert.Contains(HandshakeProtocol.CurrentVersion, HandshakeProtocol.SupportedVersions.ToArray());
        Assert.Equal(HandshakeProtocol.CurrentVersion, HandshakeProtocol.NegotiateVersion(HandshakeProtocol.CurrentVersion.ToString(System.Globalization.CultureInfo.InvariantCulture)));
    }

    [Theory]
    [InlineData("abc")]
    [InlineData("A")]
    [InlineData("a-b_c.d~e")]
    [InlineData("0123456789")]
    [InlineData("demo-session.v2")]
    public void Accepts_unreserved_url_characters(string session)
    {
        Assert.True(HandshakeProtocol.IsValidSessionId(session));
    }

    [Theory]
    [InlineData("")]
    [InlineData("a b")]
    [InlineData("a/b")]
    [InlineData("a?b")]
    [InlineData("a%20b")]
    [InlineData("ä")]
    [InlineData("a\u0000")]
    [InlineData("a+b")]
    [InlineData("日本")]
    [InlineData(".")]
    [InlineData("..")]
    [InlineData("a%2Fb")]
    public void Refuses_anything_else(string session)
    {
        Assert.False(HandshakeProtocol.IsValidSessionId(session));
    }

    [Theory]
    [InlineData(".")]
    [InlineData("..")]
    public void Refuses_a_dot_segment_which_no_public_path_can_name(string session)
    {
        // /session/../x resolves to /x and /session/./x to /session/x: a client holding such an id is unreachable.
        Assert.False(HandshakeProtocol.IsValidSessionId(session));
    }

    [Theory]
    [InlineData("...")]
    [InlineData(".a")]
    [InlineData("a..")]
    public void Accepts_dots_that_are_not_a_dot_segment(string session)
    {
        Assert.True(HandshakeProtocol.IsValidSessionId(session));
    }

    [Fact]
    public void Allows_at_most_128_characters()
    {
        Assert.True(HandshakeProtocol.IsValidSessionId(new string('a', 128)));
        Assert.False(HandshakeProtocol.IsValidSessionId(new string('a', 129)));
    }
}
