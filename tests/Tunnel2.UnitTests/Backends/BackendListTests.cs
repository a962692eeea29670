using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.UnitTests.Backends;

/// <summary>How several backends are given: the list syntax, a repeated --backend, and the affinity cookie's lookup.</summary>
public sealed class BackendListTests
{
    [Fact]
    public void A_list_gives_each_backend_its_url_and_weight_one_unless_it_names_another()
    {
        List<BackendAddress> list = BackendAddress.ParseList(" http://127.0.0.1:8081 ,https://b.internal:8443 weight=7", out string? error)!;

        Assert.Null(error);
        Assert.Equal(2, list.Count);
        Assert.Equal(new Uri("http://127.0.0.1:8081"), list[0].Url);
        Assert.Equal(1, list[0].Weight);
        Assert.Equal(new Uri("https://b.internal:8443"), list[1].Url);
        Assert.Equal(7, list[1].Weight);
    }

    [Theory]
    [InlineData("", "no backend")]
    [InlineData("http://a:1 weight=x", "weight=x")]
    [InlineData("http://a:1 max_fails=3", "max_fails=3")]
    [InlineData("a:1", "'a:1' is not an http")]
    [InlineData("http://a:1, http://a:1/", "listed twice")]
    public void A_bad_list_says_which_entry_is_wrong(string value, string expected)
    {
        Assert.Null(BackendAddress.ParseList(value, out string? error));
        Assert.Contains(expected, error, StringComparison.Ordinal);
    }

    [Fact]
    public void A_repeated_backend_switch_is_joined_into_one_list_in_order_in_either_spelling()
    {
        string[] joined = CommandLine.JoinRepeatedLists(
            ["--session", "s", "--backend", "http://a:1", "--token", "t", "--backend=http://b:2 weight=3", "--backend", "http://c:3"]);

        Assert.Equal(["--session", "s", "--token", "t", "--backend", "http://a:1, http://b:2 weight=3, http://c:3"], joined);
        List<BackendAddress> list = BackendAddress.ParseList(joined[^1], out _)!;
        Assert.Equal([1, 3, 1], list.Select(backend => backend.Weight));
    }

    [Fact]
    public void One_backend_switch_leaves_the_arguments_as_they_are()
    {
        string[] args = ["--backend", "http://a:1", "--session", "s"];

        Assert.Same(args, CommandLine.JoinRepeatedLists(args));
    }

    [Theory]
    [InlineData("Tunnel2-Backend=abc", "abc")]
    [InlineData("theme=dark; Tunnel2-Backend=abc; x=1", "abc")]
    [InlineData("XTunnel2-Backend=abc", null)]
    [InlineData("Tunnel2-Backend2=abc", null)]
    [InlineData("theme=dark", null)]
    [InlineData("theme=dark;Tunnel2-Backend=\"abc\"", "\"abc\"")]
    public void The_affinity_cookie_is_found_by_its_exact_name_among_others(string cookies, string? expected)
    {
        Assert.Equal(expected, HeadAffinityRequest.CookieValue(cookies, "Tunnel2-Backend"));
    }
}
