using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.UnitTests.Backends;

/// <summary>What a client names as served (its "Connected" line) and checks at start.</summary>
public sealed class BackendStartCheckTests
{
    [Fact]
    public void A_TCP_only_client_names_only_its_TCP_target()
    {
        var options = new TunnelClientOptions();
        options.Tcp.Target = "5432";
        options.Tcp.ServesHttp = false;

        Assert.Equal(["tcp://127.0.0.1:5432"], BackendStartCheck.TargetsOf(options).Select(target => target.Name));
    }

    [Fact]
    public void A_client_with_backends_and_a_TCP_target_names_them_all_and_checks_only_the_backends()
    {
        var options = new TunnelClientOptions();
        options.Backends.Urls = "http://127.0.0.1:8081, http://127.0.0.1:8082/app weight=2";
        options.Tcp.Target = "db.internal:5432";

        var targets = BackendStartCheck.TargetsOf(options).ToList();

        Assert.Equal(["http://127.0.0.1:8081", "http://127.0.0.1:8082/app", "tcp://db.internal:5432"], targets.Select(target => target.Name));
        Assert.Equal([false, false, true], targets.Select(target => target.IsTcp));
    }
}
