using System.IO.Pipelines;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.UnitTests.Sessions;

/// <summary>A client instance logging in again replaces its stale uplink at once; other replicas are untouched.</summary>
public sealed class SessionReplacementTests
{
    private static Uplink NewUplink(string name) =>
        new(new DuplexPipe(new Pipe().Reader, new Pipe().Writer), new UplinkSettings(), UplinkRole.Server, NullLogger.Instance, name: name);

    [Fact]
    public void A_new_login_of_the_same_instance_replaces_and_closes_the_old_uplink()
    {
        var registry = new SessionRegistry();
        Uplink stale = NewUplink("stale");
        Uplink fresh = NewUplink("fresh");
        Assert.Null(registry.Register("s", stale, "instance-1"));

        Uplink? replaced = registry.Register("s", fresh, "instance-1");

        Assert.Same(stale, replaced);
        Assert.False(stale.IsOpen);
        Assert.Equal(SessionRegistry.ReplacedReason, stale.CloseReason);
        Assert.Equal("replaced by a new login", SessionRegistry.ReplacedReason);
        Assert.Equal([fresh], registry.GetUplinks("s"));
        Assert.True(fresh.IsOpen);
        Assert.Same(fresh, registry.Pick("s"));
    }

    [Fact]
    public void Other_instances_and_logins_without_an_instance_are_replicas_not_replacements()
    {
        var registry = new SessionRegistry();
        Uplink first = NewUplink("1");
        Uplink second = NewUplink("2");
        Uplink anonymous = NewUplink("3");
        Uplink anonymousToo = NewUplink("4");

        Assert.Null(registry.Register("s", first, "instance-1"));
        Assert.Null(registry.Register("s", second, "instance-2"));
        Assert.Null(registry.Register("s", anonymous));
        Assert.Null(registry.Register("s", anonymousToo));

        Assert.Equal(4, registry.GetUplinks("s").Count);
        Assert.True(first.IsOpen && second.IsOpen && anonymous.IsOpen && anonymousToo.IsOpen);
    }

    [Fact]
    public void The_same_instance_in_another_session_is_not_replaced()
    {
        var registry = new SessionRegistry();
        Uplink a = NewUplink("a");
        Uplink b = NewUplink("b");

        registry.Register("s1", a, "instance-1");
        Assert.Null(registry.Register("s2", b, "instance-1"));

        Assert.True(a.IsOpen);
        Assert.Equal([a], registry.GetUplinks("s1"));
        Assert.Equal([b], registry.GetUplinks("s2"));
    }

    [Fact]
    public void The_late_unregister_of_the_replaced_uplink_leaves_the_new_one_registered()
    {
        var registry = new SessionRegistry();
        Uplink stale = NewUplink("stale");
        Uplink fresh = NewUplink("fresh");
        registry.Register("s", stale, "instance-1");
        registry.Register("s", fresh, "instance-1");

        registry.Unregister("s", stale); // its connection handler ends after the replacement

        Assert.Equal([fresh], registry.GetUplinks("s"));
        Uplink third = NewUplink("third");
        Assert.Same(fresh, registry.Register("s", third, "instance-1")); // the instance still maps to the fresh uplink
        Assert.Equal([third], registry.GetUplinks("s"));
    }

    [Fact]
    public void After_an_unregister_the_instance_logs_in_as_new()
    {
        var registry = new SessionRegistry();
        Uplink first = NewUplink("first");
        registry.Register("s", first, "instance-1");
        registry.Unregister("s", first);

        Uplink again = NewUplink("again");
        Assert.Null(registry.Register("s", again, "instance-1"));
        Assert.Equal([again], registry.GetUplinks("s"));
    }

    [Theory]
    [InlineData("0f8fad5bd9cb469fa16570867728950e", true)]
    [InlineData("a-b_c.d~e", true)]
    [InlineData("", false)]
    [InlineData("has space", false)]
    [InlineData("ümlaut", false)]
    public void Instance_ids_are_url_safe_tokens_of_at_most_64_characters(string id, bool valid)
    {
        Assert.Equal(valid, HandshakeProtocol.IsValidInstanceId(id));
        Assert.True(HandshakeProtocol.IsValidInstanceId(new string('x', 64)));
        Assert.False(HandshakeProtocol.IsValidInstanceId(new string('x', 65)));
    }
}
