using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Hosting;

/// <summary>The built server given keys of the previous release: they still take effect, and it warns with the new key's name.</summary>
public sealed class RenamedKeysTests
{
    [Fact]
    public async Task A_server_given_old_keys_applies_them_and_warns_naming_the_new_keys()
    {
        await using TunnelProcess server = TunnelProcess.StartServer("server-old-keys",
            "--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0", "--token", TunnelStack.Token,
            "--TunnelServer:NodeName=legacy-node", "--TunnelServer:NodeHeader=true");
        (Uri publicUrl, _) = await server.WaitForServerUrlsAsync();

        using var http = CallerHttp.Create();
        using HttpResponseMessage response = await http.GetAsync(new Uri(publicUrl, "/healthz"));

        Assert.Equal("legacy-node", Assert.Single(response.Headers.GetValues("Tunnel2-Node")));
        Assert.Contains("TunnelServer:NodeName is deprecated", server.Output, StringComparison.Ordinal);
        Assert.Contains("use TunnelServer:Cluster:NodeName (environment variable TunnelServer__Cluster__NodeName)", server.Output, StringComparison.Ordinal);
        Assert.Contains("use TunnelServer:Cluster:NodeHeader", server.Output, StringComparison.Ordinal);
    }
}
