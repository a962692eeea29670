using System.Net;
using Tunnel2.Protocol.Handshake;

namespace Tunnel2.UnitTests.Handshake;

public sealed class NetworkListTests
{
    [Theory]
    [InlineData("10.0.0.0/8", "10.0.0.0/8")]
    [InlineData("192.0.2.7", "192.0.2.7/32")]
    [InlineData("2001:db8::/32", "2001:db8::/32")]
    [InlineData("::1", "::1/128")]
    public void A_network_is_CIDR_or_one_address(string text, string expected)
    {
        Assert.True(NetworkList.TryParseNetwork(text, out IPNetwork network));
        Assert.Equal(IPNetwork.Parse(expected), network);
    }

    [Theory]
    [InlineData("10.0.0.0/8, 2001:db8::/32 ,192.0.2.7", 3)]
    [InlineData("10.0.0.0/33", -1)]
    [InlineData("10.0.0.0/8,office", -1)]
    [InlineData("", -1)]
    [InlineData("10.0.0.0/8,", -1)]
    public void A_list_is_comma_separated_and_every_item_must_be_a_network(string list, int count)
    {
        bool parsed = NetworkList.TryParse(list, out List<IPNetwork> networks);

        Assert.Equal(count >= 0, parsed);
        if (parsed)
        {
            Assert.Equal(count, networks.Count);
        }
    }
}
