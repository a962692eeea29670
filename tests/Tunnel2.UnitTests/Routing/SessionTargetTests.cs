using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.UnitTests.Routing;

public sealed class SessionTargetTests
{
    [Theory]
    [InlineData("/session/abc/x/y?q=1", "abc", "/session/abc", "/x/y?q=1")]
    [InlineData("/session/abc/", "abc", "/session/abc", "/")]
    [InlineData("/session/abc/?x=1", "abc", "/session/abc", "/?x=1")]
    [InlineData("/session/a.b-c_d~e/loadtest/get", "a.b-c_d~e", "/session/a.b-c_d~e", "/loadtest/get")]
    [InlineData("/session/abc//double", "abc", "/session/abc", "//double")]
    [InlineData("/session/abc/a%20b/%2F/c?q=%3D&r=%E2%9C%93", "abc", "/session/abc", "/a%20b/%2F/c?q=%3D&r=%E2%9C%93")]
    [InlineData("/session/a%2Fb/x", "a%2Fb", "/session/a%2Fb", "/x")]
    [InlineData("/session/abc/x?next=/session/def/y", "abc", "/session/abc", "/x?next=/session/def/y")]
    [InlineData("/session/abc/x?next=../../def", "abc", "/session/abc", "/x?next=../../def")]
    public void Splits_session_prefix_and_backend_target(string raw, string session, string prefix, string target)
    {
        Assert.Equal(SessionTargetStatus.Ok, SessionTarget.TryParse(raw, out string parsedSession, out string parsedPrefix, out string backendTarget));

        Assert.Equal(session, parsedSession);
        Assert.Equal(prefix, parsedPrefix);
        Assert.Equal(target, backendTarget);
    }

    [Theory]
    [InlineData("/session/abc", "abc", "/")]
    [InlineData("/session/abc?x=1&y=%20", "abc", "/?x=1&y=%20")]
    [InlineData("/session/abc?", "abc", "/?")]
    public void The_session_root_without_its_slash_is_told_apart_with_the_target_the_redirect_adds_to_the_prefix(string raw, string session, string target)
    {
        Assert.Equal(SessionTargetStatus.SessionRootWithoutSlash, SessionTarget.TryParse(raw, out string parsedSession, out string prefix, out string backendTarget));

        Assert.Equal(session, parsedSession);
        Assert.Equal("/session/" + session, prefix);
        Assert.Equal(target, backendTarget);
    }

    [Theory]
    [InlineData("/session/hostile/c/../d", "hostile", "/d")]
    [InlineData("/session/hostile/./c", "hostile", "/c")]
    [InlineData("/session/hostile/a/b/..", "hostile", "/a/")]
    [InlineData("/session/hostile/a/b/../", "hostile", "/a/")]
    [InlineData("/session/hostile/a/%2e%2e/c", "hostile", "/c")]
    [InlineData("/session/hostile/a/.%2E/c?x=1", "hostile", "/c?x=1")]
    [InlineData("/session/hostile/a/%2E./c", "hostile", "/c")]
    [InlineData("/session/hostile/a/%2e/c", "hostile", "/a/c")]
    [InlineData("/session/./hostile/c", "hostile", "/c")]
    [InlineData("/session/hostile/a/...", "hostile", "/a/...")]
    [InlineData("/session/hostile/a/..b", "hostile", "/a/..b")]
    [InlineData("/session/hostile/a%2F..%2Fb", "hostile", "/a%2F..%2Fb")]
    [InlineData("/session/hostile/c#fragment", "hostile", "/c")]
    [InlineData("/session/hostile/c?q=1#frag?x", "hostile", "/c?q=1")]
    [InlineData("/session/hostile/a/../c#x", "hostile", "/c")]
    public void Session_and_backend_target_both_come_from_the_resolved_path(string raw, string session, string target)
    {
        Assert.Equal(SessionTargetStatus.Ok, SessionTarget.TryParse(raw, out string parsedSession, out string prefix, out string backendTarget));

        Assert.Equal(session, parsedSession);
        Assert.Equal("/session/" + session, prefix);
        Assert.Equal(target, backendTarget);
    }

    [Theory]
    [InlineData("/session/other/../hostile/c")]
    [InlineData("/session/other/%2e%2e/hostile/c")]
    [InlineData("/session/other/.%2E/hostile/c")]
    [InlineData("/session/hostile/c/../..")]
    [InlineData("/session/hostile/c/../../")]
    [InlineData("/session/hostile/..")]
    [InlineData("/session/hostile/../../etc/passwd")]
    [InlineData("/session/hostile/a/b/../../../x")]
    [InlineData("/foo/../session/hostile/c")]
    public void A_path_that_climbs_above_its_session_is_refused(string raw)
    {
        Assert.Equal(SessionTargetStatus.ClimbsAboveSession, SessionTarget.TryParse(raw, out _, out _, out string backendTarget));
        Assert.Equal(string.Empty, backendTarget);
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
    [InlineData("*")]
    [InlineData("session/abc")]
    [InlineData("//session/abc")]
    [InlineData("http://example/session/abc/x")]
    [InlineData("#/session/abc")]
    public void Rejects_targets_without_a_session(string raw)
    {
        Assert.Equal(SessionTargetStatus.NoSession, SessionTarget.TryParse(raw, out _, out _, out string backendTarget));
        Assert.Equal(string.Empty, backendTarget);
    }

    [Fact]
    public void The_backend_target_always_starts_with_a_slash()
    {
        string[] samples = ["/session/a", "/session/a?", "/session/a/", "/session/a/b", "/session/a?b", "/session/a/?b", "/session/a/b/..", "/session/a/."];

        foreach (string raw in samples)
        {
            Assert.True(SessionTarget.TryParse(raw, out _, out _, out string target) is SessionTargetStatus.Ok or SessionTargetStatus.SessionRootWithoutSlash);
            Assert.StartsWith("/", target, StringComparison.Ordinal);
        }
    }
}
