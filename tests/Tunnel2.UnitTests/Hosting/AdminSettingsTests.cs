using Tunnel2.Hosting.Admin;
using Tunnel2.ProxyEntry.Diagnostics;

namespace Tunnel2.UnitTests.Hosting;

/// <summary>The admin listener's settings, and the bound on per-session metric labels.</summary>
public sealed class AdminSettingsTests
{
    [Theory]
    [InlineData(null, null)]
    [InlineData("http://127.0.0.1:12002", null)]
    [InlineData("http://localhost:12002", null)]
    [InlineData("http://[::1]:12002", null)]
    [InlineData("http://0.0.0.0:12002", "0123456789abcdef")]
    [InlineData("http://127.0.0.1:0", "0123456789abcdef")]
    public void Loopback_needs_no_token_and_anything_else_does(string? url, string? token)
    {
        Assert.Empty(AdminSettings.Problems("TunnelServer", url, token));
    }

    [Theory]
    [InlineData("http://0.0.0.0:12002", null, "reachable from other machines")]
    [InlineData("http://192.0.2.1:12002", null, "TunnelServer:Admin:Token")]
    [InlineData("http://127.0.0.1:12002", "short", "at least 16")]
    [InlineData("https://127.0.0.1:12002", null, "must be http://")]
    [InlineData("ftp://127.0.0.1:12002", null, "TunnelServer:Admin:Url")]
    [InlineData(null, "0123456789abcdef", "no admin listener")]
    public void Bad_admin_settings_say_what_to_fix(string? url, string? token, string expected)
    {
        Assert.Contains(AdminSettings.Problems("TunnelServer", url, token), problem => problem.Contains(expected, StringComparison.Ordinal));
    }

    [Theory]
    [InlineData(null, "http://127.0.0.1:4040", null, null)]
    [InlineData(null, "http://127.0.0.1:4040", "0123456789abcdef", null)]
    [InlineData(null, "http://0.0.0.0:4040", null, "TunnelClient:Inspector:Url http://0.0.0.0:4040 is reachable from other machines")]
    [InlineData("http://127.0.0.1:12003", "https://127.0.0.1:4040", null, "TunnelClient:Inspector:Url must be http://")]
    [InlineData(null, null, "0123456789abcdef", "set TunnelClient:Admin:Url (--admin-url) or TunnelClient:Inspector:Url (--inspect-url) too")]
    public void The_admin_token_guards_the_inspector_too(string? adminUrl, string? inspectUrl, string? token, string? expected)
    {
        string[] problems = [.. AdminSettings.Problems("TunnelClient", token, ("Admin:Url", "--admin-url", adminUrl), ("Inspector:Url", "--inspect-url", inspectUrl))];

        if (expected is null)
        {
            Assert.Empty(problems);
        }
        else
        {
            Assert.Contains(problems, problem => problem.Contains(expected, StringComparison.Ordinal));
        }
    }

    [Fact]
    public void The_first_sessions_keep_their_own_label_and_later_ones_share_one()
    {
        var labels = new SessionLabels(limit: 2);

        Assert.Equal("a", labels.LabelFor("a"));
        Assert.Equal("b", labels.LabelFor("b"));
        Assert.Equal(SessionLabels.Other, labels.LabelFor("c"));
        Assert.Equal("a", labels.LabelFor("a")); // a labelled session keeps its label
        Assert.Equal(SessionLabels.Other, labels.LabelFor("d"));
    }
}
