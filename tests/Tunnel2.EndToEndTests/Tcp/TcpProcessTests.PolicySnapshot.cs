using System.Net;
using System.Net.Http.Headers;
using System.Net.Sockets;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Access;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// The session's visitor rules live in its policy, which both doors of the built server read: a change of the
/// credentials file rebuilds it, and the next HTTP request and the next TCP caller of the session meet the new rules.
/// </summary>
public sealed partial class TcpProcessTests
{
    private const string PolicyApiKey = "visitor-api-key-0123456789";

    [Fact]
    public async Task A_credentials_reload_changes_what_the_next_http_request_and_tcp_caller_of_a_session_meet()
    {
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-proc-rules-{Guid.NewGuid():N}"[..30];
        string path = Path.Combine(Path.GetTempPath(), $"tunnel2-policy-{Guid.NewGuid():N}.json");
        await File.WriteAllTextAsync(path, CredentialsFileTests.CredentialsJson([], []));
        try
        {
            await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
            {
                ServerArgs = [TcpTunnel.PortRange(), $"--TunnelServer:CredentialsFile={path}"],
                ClientArgs = ["--tcp", target.Address],
            });
            int port = await PortAsync(stack);
            using HttpClient http = CallerHttp.Create();
            using (Socket open = await EchoingAsync(port))
            {
                Assert.Equal(HttpStatusCode.OK, await StatusAsync(http, stack, apiKey: null)); // no rules yet
            }

            // An API key: HTTP asks for it; TCP, which cannot carry one, takes no caller.
            await File.WriteAllTextAsync(path, CredentialsFileTests.CredentialsJson([],
                [$$"""{ "Sessions": "{{session}}", "ApiKeys": [ "{{TokenHash.Create(PolicyApiKey)}}" ] }"""]));
            await Eventually.WaitUntilAsync(async () => await StatusAsync(http, stack, apiKey: null) == HttpStatusCode.Unauthorized,
                "the reloaded file's API key is asked for");
            Assert.Equal(HttpStatusCode.OK, await StatusAsync(http, stack, PolicyApiKey));
            Assert.True(await TcpTunnel.IsCutAsync(port, [1], TimeSpan.FromSeconds(15)), "a session that wants an API key takes no TCP caller");
            await stack.Server.WaitForOutputAsync(new Regex(Regex.Escape(session) + ".*credentials-required"), TimeSpan.FromSeconds(10));

            // An address rule: both doors turn this address away, whatever it carries.
            await File.WriteAllTextAsync(path, CredentialsFileTests.CredentialsJson([],
                [$$"""{ "Sessions": "{{session}}", "Deny": [ "127.0.0.0/8", "::1/128" ] }"""]));
            await Eventually.WaitUntilAsync(async () => await StatusAsync(http, stack, PolicyApiKey) == HttpStatusCode.Forbidden,
                "the reloaded file's deny list holds");
            Assert.True(await TcpTunnel.IsCutAsync(port, [1], TimeSpan.FromSeconds(15)), "a denied TCP caller should be cut");
            await stack.Server.WaitForOutputAsync(new Regex(Regex.Escape(session) + ".*address-denied"), TimeSpan.FromSeconds(10));

            // The rules gone: the session is open again on both doors.
            await File.WriteAllTextAsync(path, CredentialsFileTests.CredentialsJson([], []));
            await Eventually.WaitUntilAsync(async () => await StatusAsync(http, stack, apiKey: null) == HttpStatusCode.OK, "the session is open again");
            using Socket again = await EchoingAsync(port);
            Assert.Equal(2, target.AcceptedConnections); // the first caller and this one: no refused caller reached the target
            Assert.False(stack.Server.HasExited || stack.Client.HasExited, "a tunnel process exited during the test");
        }
        finally
        {
            File.Delete(path);
        }
    }

    private static async Task<HttpStatusCode> StatusAsync(HttpClient http, ProcessStack stack, string? apiKey)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, stack.SessionUrl("/loadtest/ping"));
        if (apiKey is not null)
        {
            request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", apiKey);
        }

        using HttpResponseMessage answer = await http.SendAsync(request);
        return answer.StatusCode;
    }
}
