using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.UnitTests.Configuration;

/// <summary><c>TunnelClient:Server</c> names one server or several; each must be an http(s) URL, and none twice.</summary>
public sealed class ServerListTests
{
    [Fact]
    public void One_server_and_several_separated_by_commas_are_read_in_order()
    {
        Assert.Equal([new Uri("http://127.0.0.1:12001")], ServerList.Parse("http://127.0.0.1:12001", out _));

        IReadOnlyList<Uri>? servers = ServerList.Parse("https://node-a:12001, http://node-b:12001 ,http://node-c:12001", out string? error);

        Assert.Null(error);
        Assert.Equal(["https://node-a:12001/", "http://node-b:12001/", "http://node-c:12001/"], servers!.Select(s => s.ToString()));
    }

    [Theory]
    [InlineData("", "no server given")]
    [InlineData(" , ", "no server given")]
    [InlineData("ftp://node-a:21", "'ftp://node-a:21' is not an http:// or https:// URL")]
    [InlineData("http://node-a:12001,node-b", "'node-b' is not an http:// or https:// URL")]
    [InlineData("http://node-a:12001,http://NODE-A:12001/", "'http://NODE-A:12001/' is given twice")]
    public void A_list_with_a_bad_or_repeated_server_is_refused_with_the_reason(string value, string reason)
    {
        Assert.Null(ServerList.Parse(value, out string? error));
        Assert.StartsWith(reason, error);
    }

    [Fact]
    public void A_repeated_server_switch_is_joined_into_one_list_as_the_backend_switch_is()
    {
        string[] joined = CommandLine.JoinRepeatedLists(["--session", "s", "--server", "http://a:1", "--backend", "http://b:2", "--server=http://c:3"]);

        Assert.Equal(["--session", "s", "--backend", "http://b:2", "--server", "http://a:1, http://c:3"], joined);
    }
}
