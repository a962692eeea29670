using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Relay.Shaping;

namespace Tunnel2.UnitTests.Relay.Shaping;

public sealed class HostHeaderPolicyTests
{
    private const string BackendHost = "127.0.0.1:8080";

    private static readonly List<HeaderField> FromCaller = [new("Accept", "*/*"), new("X-Forwarded-Host", "jup.apps.test:13700")];

    [Theory]
    [InlineData(null)]
    [InlineData("preserve")]
    [InlineData(" PRESERVE ")]
    public void Preserve_is_the_default_and_sends_the_callers_Host(string? value)
    {
        HostHeaderPolicy policy = HostHeaderPolicy.Parse(value, out string? error)!;

        Assert.Null(error);
        Assert.True(policy.PreservesCallerHost);
        Assert.Null(policy.FixedHost);
        Assert.Equal("jup.apps.test:13700", policy.For(FromCaller, BackendHost));
    }

    [Fact]
    public void Preserve_without_a_callers_Host_sends_the_backends_own()
    {
        HostHeaderPolicy policy = HostHeaderPolicy.Parse("preserve", out _)!;

        Assert.Equal(BackendHost, policy.For([new("Accept", "*/*")], BackendHost));
        Assert.Equal(BackendHost, policy.For([new("X-Forwarded-Host", "")], BackendHost));
    }

    [Fact]
    public void Rewrite_sends_the_backends_own_host_and_port()
    {
        HostHeaderPolicy policy = HostHeaderPolicy.Parse("Rewrite", out _)!;

        Assert.False(policy.PreservesCallerHost);
        Assert.Equal(BackendHost, policy.For(FromCaller, BackendHost));
    }

    [Theory]
    [InlineData("app.internal")]
    [InlineData("app.internal:8080")]
    [InlineData("10.0.0.5")]
    [InlineData("[::1]:8080")]
    public void A_host_name_with_an_optional_port_is_sent_always(string value)
    {
        HostHeaderPolicy policy = HostHeaderPolicy.Parse(value, out string? error)!;

        Assert.Null(error);
        Assert.Equal(value, policy.FixedHost);
        Assert.Equal(value, policy.For(FromCaller, BackendHost));
    }

    [Theory]
    [InlineData("")]
    [InlineData("http://app.internal")]
    [InlineData("app.internal/path")]
    [InlineData("user@app.internal")]
    [InlineData("app internal")]
    [InlineData("app.internal\r\nX-Injected: 1")]
    [InlineData("app.internal:99999")]
    public void Anything_else_is_refused_with_the_choices_named(string value)
    {
        Assert.Null(HostHeaderPolicy.Parse(value, out string? error));
        Assert.Contains("neither preserve, rewrite nor a host name", error, StringComparison.Ordinal);
    }
}
