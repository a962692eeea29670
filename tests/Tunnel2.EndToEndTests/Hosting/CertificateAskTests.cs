using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Tunnel2.EndToEndTests.Access;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelServer;
using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.EndToEndTests.Hosting;

/// <summary>
/// The edge's certificate ask (<c>--certificate-ask</c>, docs/edge.md) over real sockets: <c>GET /edge/ask?domain=</c> on
/// the admin listener says 200 only for a custom domain or a session host some client may serve, and 404 otherwise.
/// </summary>
public sealed class CertificateAskTests
{
    private const string Suffix = "tunnel.test";
    private const string CustomDomain = "app.example.org";
    private const string AdminToken = "edge-ask-admin-token-0123456789";

    [Fact]
    public async Task With_the_single_token_a_custom_domain_and_any_session_host_are_yes_and_every_other_name_no()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--admin-url", "http://127.0.0.1:0", "--certificate-ask", "true",
            "--host-suffix", Suffix, $"--ProxyEntry:Routing:Hosts:{CustomDomain}=demo");
        Uri admin = stack.Server.Services.GetRequiredService<ServerEndpoints>().AdminUrl!;
        using HttpClient http = CallerHttp.Create();

        Assert.Equal(HttpStatusCode.OK, await AskAsync(http, admin, CustomDomain));
        Assert.Equal(HttpStatusCode.OK, await AskAsync(http, admin, $"demo.{Suffix}"));
        Assert.Equal(HttpStatusCode.OK, await AskAsync(http, admin, $"nobody-connected-yet.{Suffix}")); // the token may serve any session
        Assert.Equal(HttpStatusCode.NotFound, await AskAsync(http, admin, "example.net"));
        Assert.Equal(HttpStatusCode.NotFound, await AskAsync(http, admin, Suffix));
        Assert.Equal(HttpStatusCode.NotFound, await AskAsync(http, admin, $"under_score.{Suffix}"));
        Assert.Equal(HttpStatusCode.NotFound, await AskAsync(http, admin, "127.0.0.1"));

        using HttpResponseMessage no = await http.GetAsync(new Uri(admin, "/edge/ask?domain=example.net"));
        Assert.Equal("application/problem+json", no.Content.Headers.ContentType?.MediaType);
        Assert.Contains("urn:tunnel2:problem:edge-ask-refused", await no.Content.ReadAsStringAsync(), StringComparison.Ordinal);

        using HttpResponseMessage missing = await http.GetAsync(new Uri(admin, "/edge/ask"));
        Assert.Equal(HttpStatusCode.BadRequest, missing.StatusCode);
        Assert.Contains("urn:tunnel2:problem:edge-ask-no-domain", await missing.Content.ReadAsStringAsync(), StringComparison.Ordinal);

        // Only the admin listener answers it: on the public port the path is no session's.
        Assert.Equal(HttpStatusCode.NotFound, await AskAsync(http, stack.PublicUrl, CustomDomain));
    }

    [Fact]
    public async Task Behind_an_admin_token_the_ask_takes_it_as_access_token_the_way_a_caddy_ask_url_carries_it()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--admin-url", "http://127.0.0.1:0", "--admin-token", AdminToken,
            "--certificate-ask", "true", "--host-suffix", Suffix);
        Uri admin = stack.Server.Services.GetRequiredService<ServerEndpoints>().AdminUrl!;
        using HttpClient http = CallerHttp.Create();

        Assert.Equal(HttpStatusCode.Unauthorized, await AskAsync(http, admin, $"demo.{Suffix}"));
        using HttpResponseMessage yes = await http.GetAsync(new Uri(admin, $"/edge/ask?access_token={AdminToken}&domain=demo.{Suffix}"));
        Assert.Equal(HttpStatusCode.OK, yes.StatusCode);
        using HttpResponseMessage no = await http.GetAsync(new Uri(admin, $"/edge/ask?access_token={AdminToken}&domain=demo.example.net"));
        Assert.Equal(HttpStatusCode.NotFound, no.StatusCode);
    }

    [Fact]
    public async Task With_a_credentials_file_only_the_sessions_its_clients_may_serve_are_yes_and_a_changed_file_counts_at_once()
    {
        string path = Path.Combine(Path.GetTempPath(), $"tunnel2-ask-credentials-{Guid.NewGuid():N}.json");
        await File.WriteAllTextAsync(path, CredentialsFileTests.CredentialsJson(CredentialsFileTests.Client("team-a", "team-a-token-0123456789", "team-a-*")));
        WebApplication server = TunnelServerApp.Create([
            "--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0", "--admin-url", "http://127.0.0.1:0",
            "--credentials", path, "--certificate-ask", "true", "--host-suffix", Suffix, "--Serilog:MinimumLevel:Default=Warning",
        ]);
        try
        {
            await server.StartAsync();
            Uri admin = server.Services.GetRequiredService<ServerEndpoints>().AdminUrl!;
            using HttpClient http = CallerHttp.Create();

            Assert.Equal(HttpStatusCode.OK, await AskAsync(http, admin, $"team-a-web.{Suffix}"));
            Assert.Equal(HttpStatusCode.NotFound, await AskAsync(http, admin, $"team-b-web.{Suffix}"));

            await File.WriteAllTextAsync(path, CredentialsFileTests.CredentialsJson(
                CredentialsFileTests.Client("team-a", "team-a-token-0123456789", "team-a-*"),
                CredentialsFileTests.Client("team-b", "team-b-token-0123456789", "team-b-*")));
            await Eventually.WaitUntilAsync(async () => await AskAsync(http, admin, $"team-b-web.{Suffix}") == HttpStatusCode.OK,
                "the reloaded file's new client makes its sessions' hosts a yes");
        }
        finally
        {
            await server.StopAsync();
            await server.DisposeAsync();
            File.Delete(path);
        }
    }

    [Fact]
    public void An_ask_without_the_admin_listener_or_without_host_routing_is_refused_at_start_naming_what_is_missing()
    {
        var noAdmin = Assert.Throws<OptionsValidationException>(() => TunnelServerApp.Create([
            "--token", TunnelStack.Token, "--certificate-ask", "true", "--host-suffix", Suffix]));
        Assert.Contains(noAdmin.Failures, failure => failure.Contains("--admin-url", StringComparison.Ordinal));

        var noRouting = Assert.Throws<OptionsValidationException>(() => TunnelServerApp.Create([
            "--token", TunnelStack.Token, "--certificate-ask", "true", "--admin-url", "http://127.0.0.1:0"]));
        Assert.Contains(noRouting.Failures, failure => failure.Contains("--host-suffix", StringComparison.Ordinal));
    }

    private static async Task<HttpStatusCode> AskAsync(HttpClient http, Uri listener, string domain)
    {
        using HttpResponseMessage response = await http.GetAsync(new Uri(listener, $"/edge/ask?domain={Uri.EscapeDataString(domain)}"));
        return response.StatusCode;
    }
}
