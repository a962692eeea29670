using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.UnitTests.Routing;

/// <summary>RFC 3986 §5.2.4 dot-segment removal, with percent-encoded dots counted as dots.</summary>
public sealed class CanonicalTargetTests
{
    [Theory]
    [InlineData("/a/b/c/./../../g", "/a/g")] // RFC 3986 §5.2.4's own example
    [InlineData("/mid/content=5/../6", "/mid/6")] // and its second one
    [InlineData("/a/b/.", "/a/b/")]
    [InlineData("/a/b/..", "/a/")]
    [InlineData("/a/./b", "/a/b")]
    [InlineData("/a//../b", "/a/b")]
    [InlineData("/a/%2E%2E/b", "/b")]
    [InlineData("/a/%2e/b", "/a/b")]
    [InlineData("/.", "/")]
    [InlineData("/a/..?q=/../x", "/?q=/../x")]
    [InlineData("/a/b#/../..", "/a/b")]
    [InlineData("/plain/path?x=1", "/plain/path?x=1")]
    [InlineData("/a.b/c..d/.e/%2e%2e%2e", "/a.b/c..d/.e/%2e%2e%2e")]
    public void Resolves_dot_segments_and_drops_the_fragment(string raw, string canonical)
    {
        Assert.Equal(CanonicalTargetStatus.Ok, CanonicalTarget.TryCreate(raw, fixedSegments: 0, out string target));
        Assert.Equal(canonical, target);
    }

    [Fact]
    public void A_target_without_dot_segments_or_fragment_is_returned_as_is()
    {
        const string raw = "/session/abc/x%2Fy?q=%2e%2e";

        Assert.Equal(CanonicalTargetStatus.Ok, CanonicalTarget.TryCreate(raw, fixedSegments: 2, out string target));
        Assert.Same(raw, target);
    }

    [Theory]
    [InlineData("/..", 0)]
    [InlineData("/a/../..", 0)]
    [InlineData("/a/..", 1)]
    [InlineData("/a/b/../..", 1)]
    [InlineData("/a/b/c/../../..", 2)]
    public void Climbing_above_the_fixed_segments_is_refused(string raw, int fixedSegments)
    {
        Assert.Equal(CanonicalTargetStatus.ClimbsAboveRoot, CanonicalTarget.TryCreate(raw, fixedSegments, out _));
    }

    [Theory]
    [InlineData("")]
    [InlineData("*")]
    [InlineData("example.com:443")]
    [InlineData("http://example.com/a")]
    public void Only_origin_form_has_a_canonical_target(string raw)
    {
        Assert.Equal(CanonicalTargetStatus.NotOriginForm, CanonicalTarget.TryCreate(raw, fixedSegments: 0, out _));
    }
}
