using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.UnitTests.Access;

public sealed class SessionPatternTests
{
    [Theory]
    [InlineData("demo", "demo", true)]
    [InlineData("demo", "demo2", false)]
    [InlineData("demo", "Demo", false)]
    [InlineData("team-a-*", "team-a-web", true)]
    [InlineData("team-a-*", "team-a-", true)]
    [InlineData("team-a-*", "team-b-web", false)]
    [InlineData("*", "anything.at-all", true)]
    [InlineData("*-prod", "shop-prod", true)]
    [InlineData("*-prod", "shop-prod-2", false)]
    [InlineData("ci-??", "ci-42", true)]
    [InlineData("ci-??", "ci-4", false)]
    [InlineData("a*b*c", "a-x-b-y-b-c", true)]
    [InlineData("a*b*c", "a-x-c-b", false)]
    public void Patterns_match_as_globs(string pattern, string session, bool matches)
    {
        Assert.True(SessionPattern.TryParse(pattern, out SessionPattern? parsed, out _));
        Assert.Equal(matches, parsed!.IsMatch(session));
    }

    [Theory]
    [InlineData("")]
    [InlineData("a/b")]
    [InlineData("a b")]
    [InlineData("a%2F")]
    [InlineData(null)]
    public void Text_that_could_never_match_a_session_id_is_refused_with_a_reason(string? pattern)
    {
        Assert.False(SessionPattern.TryParse(pattern, out _, out string? error));
        Assert.Contains("session", error, StringComparison.Ordinal);
    }

    [Fact]
    public void The_exact_name_wins_then_the_pattern_fixing_more_characters()
    {
        VisitorPolicy Policy(string pattern)
        {
            Assert.True(SessionPattern.TryParse(pattern, out SessionPattern? parsed, out _));
            return new VisitorPolicy(parsed!, []);
        }

        var policies = new VisitorPolicies([Policy("*"), Policy("team-*"), Policy("team-a-*"), Policy("team-a-web")]);

        Assert.Equal("team-a-web", policies.For("team-a-web")!.Sessions.Text);
        Assert.Equal("team-a-*", policies.For("team-a-api")!.Sessions.Text);
        Assert.Equal("team-*", policies.For("team-b")!.Sessions.Text);
        Assert.Equal("*", policies.For("other")!.Sessions.Text);
        Assert.Null(new VisitorPolicies([Policy("team-*")]).For("other"));
    }
}
