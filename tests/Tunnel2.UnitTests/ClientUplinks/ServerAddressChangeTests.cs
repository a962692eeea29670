using System.Net;
using Tunnel2.TunnelClient.Uplinks;

namespace Tunnel2.UnitTests.ClientUplinks;

public sealed class ServerAddressChangeTests
{
    private static readonly IPAddress A = IPAddress.Parse("10.0.0.1");
    private static readonly IPAddress B = IPAddress.Parse("10.0.0.2");
    private static readonly IPAddress C = IPAddress.Parse("fd00::3");

    [Fact]
    public void The_first_answer_adds_each_address_once()
    {
        ServerAddressChange change = ServerAddressChange.Between([], [A, B, A]);

        Assert.Equal([A, B], change.Added);
        Assert.Empty(change.Removed);
    }

    [Fact]
    public void A_node_that_joins_is_added_and_one_that_left_is_removed_while_the_others_stay()
    {
        ServerAddressChange change = ServerAddressChange.Between([A, B], [B, C]);

        Assert.Equal([C], change.Added);
        Assert.Equal([A], change.Removed);
    }

    [Fact]
    public void The_same_addresses_in_another_order_change_nothing()
    {
        ServerAddressChange change = ServerAddressChange.Between([A, B], [B, A]);

        Assert.Empty(change.Added);
        Assert.Empty(change.Removed);
    }

    [Fact]
    public void An_empty_answer_keeps_the_nodes_there_are()
    {
        ServerAddressChange change = ServerAddressChange.Between([A, B], []);

        Assert.Empty(change.Added);
        Assert.Empty(change.Removed);
    }
}
