using Tunnel2.ProxyEntry.Forwarding;

namespace Tunnel2.UnitTests.Forwarding;

public sealed class SessionTargetTests
{
    [Theory]
    [InlineData("/session/abc/x/y?q=1", "abc", "/session/abc", "/x/y?q=1")]
    [InlineData("/session/abc", "abc", "/session/abc", "/")]
    [InlineData("/session/abc/", "abc", "/session/abc", "/")]
    [InlineData("/session/abc?x=1", "abc", "/session/abc", "/?x=1")]
    [InlineData("/session/abc?", "abc", "/session/abc", "/?")]
    [InlineData("/session/a.b-c_d~e/loadtest/get", "a.b-c_d~e", "/session/a.b-c_d~e", "/loadtest/get")]
    [InlineData("/session/abc//double", "abc", "/session/abc", "//double")]
    [InlineData("/session/abc/a%20b/%2F/c?q=%3D&r=%E2%9C%93", "abc", "/session/abc", "/a%20b/%2F/c?q=%3D&r=%E2%9C%93")]
    [InlineData("/session/a%2Fb/x", "a%2Fb", "/session/a%2Fb", "/x")]
    [InlineData("/session/abc/x?next=/session/def/y", "abc", "/session/abc", "/x?next=/session/def/y")]
    public void Splits_session_prefix_and_backend_target(string raw, string session, string prefix, string target)
    {
        Assert.True(SessionTarget.TryParse(raw, out Range sessionId, out int prefixLength, out string backendTarget));

        Assert.Equal(session, raw[sessionId]);
        Assert.Equal(prefix, raw[..prefixLength]);
        Assert.Equal(target, backendTarget);
    }

    [Theory]
    [InlineData("/session//x")]
    [InlineData("/session/")]
    [InlineData("/session/?x=1")]
    [InlineData("/session")]
    [InlineData("/sessions/abc")]
    [InlineData("/Session/abc")]
    [InlineData("/other")]
    [InlineData("/")]
    [InlineData("")]
    [InlineData("session/abc")]
    [InlineData("//session/abc")]
    public void Rejects_targets_without_a_session(string raw)
    {
        Assert.False(SessionTarget.TryParse(raw, out _, out _, out string backendTarget));
        Assert.Equal(string.Empty, backendTarget);
    }

    [Fact]
    public void The_backend_target_always_starts_with_a_slash()
    {
        string[] samples = ["/session/a", "/session/a?", "/session/a/", "/session/a/b", "/session/a?b", "/session/a/?b"];

        foreach (string raw in samples)
        {
            Assert.True(SessionTarget.TryParse(raw, out _, out _, out string target));
            Assert.StartsWith("/", target, StringComparison.Ordinal);
        }
    }
}
