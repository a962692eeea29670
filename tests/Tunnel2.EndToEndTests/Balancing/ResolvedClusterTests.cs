using System.Net;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelClient.Uplinks;

namespace Tunnel2.EndToEndTests.Balancing;

/// <summary>
/// A client given one name for a cluster (<c>--resolve-interval</c>) keeps an uplink to every address the name has,
/// and follows the name as nodes join and leave. Two real servers listen on the same tunnel port of 127.0.0.1 and
/// 127.0.0.2; the name's answers come from the test (this machine's DNS has no name with several loopback addresses),
/// everything else is real sockets.
/// </summary>
public sealed class ResolvedClusterTests
{
    private static readonly IPAddress NodeA = IPAddress.Parse("127.0.0.1");
    private static readonly IPAddress NodeB = IPAddress.Parse("127.0.0.2");

    [Fact]
    public async Task The_client_opens_an_uplink_to_each_address_of_the_name_and_drains_one_whose_node_left_the_name()
    {
        await using TunnelStack first = await TunnelStack.StartAsync();
        int tunnelPort = first.TunnelUrl.Port;
        await using TunnelStack second = await TunnelStack.StartAsync("--TunnelServer:Listeners:TunnelUrl=http://127.0.0.2:" + tunnelPort);
        var names = new ScriptedResolver([NodeA]);
        string session = Guid.NewGuid().ToString("N");
        await using var client = new TunnelClientHandle(Tunnel2.TunnelClient.TunnelClientApp.Create(
        [
            "--server", $"http://cluster.test:{tunnelPort}",
            "--resolve-interval", "00:00:00.100",
            "--session", session,
            "--token", TunnelStack.Token,
            "--backend", first.BackendUrl.ToString().TrimEnd('/'),
            "--Serilog:MinimumLevel:Default=Warning",
        ], services => services.AddSingleton<IServerResolver>(names)));
        await client.StartAsync();
        await Eventually.WaitUntilAsync(() => first.Registry.GetUplinks(session).Count == 1, "an uplink to the one node the name has");
        Assert.Empty(second.Registry.GetUplinks(session));

        names.Answer([NodeA, NodeB]);
        await Eventually.WaitUntilAsync(() => second.Registry.GetUplinks(session).Count == 1 && client.Status.ConnectedUplinks == 2,
            "an uplink to the node that joined");
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
        foreach (TunnelStack node in new[] { first, second })
        {
            Assert.Equal("pong", await http.GetStringAsync(node.SessionUrl(session, "/loadtest/ping")));
        }

        names.Answer([NodeB]);
        await Eventually.WaitUntilAsync(() => first.Registry.GetUplinks(session).Count == 0 && client.Status.ConnectedUplinks == 1,
            "the uplink to the node that left the name drains and closes");
        Assert.Single(second.Registry.GetUplinks(session));
        Assert.Equal("pong", await http.GetStringAsync(second.SessionUrl(session, "/loadtest/ping")));

        // A lookup that fails, or finds nothing, keeps the node there is.
        names.Fail();
        await Eventually.WaitUntilAsync(() => names.Lookups > 0 && names.FailedLookups >= 2, "two failed lookups");
        names.Answer([]);
        int lookups = names.Lookups;
        await Eventually.WaitUntilAsync(() => names.Lookups >= lookups + 2, "two empty answers");
        Assert.Single(second.Registry.GetUplinks(session));
        Assert.Equal(1, client.Status.ConnectedUplinks);
    }

    /// <summary>Answers every lookup with the addresses the test last gave it, or fails as a broken DNS would.</summary>
    private sealed class ScriptedResolver(IPAddress[] first) : IServerResolver
    {
        private volatile IPAddress[]? _answer = first;
        private int _lookups;
        private int _failed;

        public int Lookups => Volatile.Read(ref _lookups);

        public int FailedLookups => Volatile.Read(ref _failed);

        public void Answer(IPAddress[] addresses) => _answer = addresses;

        public void Fail()
        {
            Volatile.Write(ref _failed, 0);
            _answer = null;
        }

        public Task<IPAddress[]> ResolveAsync(string host, CancellationToken cancellationToken)
        {
            Assert.Equal("cluster.test", host);
            Interlocked.Increment(ref _lookups);
            if (_answer is not { } answer)
            {
                Interlocked.Increment(ref _failed);
                return Task.FromException<IPAddress[]>(new System.Net.Sockets.SocketException((int)System.Net.Sockets.SocketError.HostNotFound));
            }

            return Task.FromResult(answer);
        }
    }
}
