using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.EndToEndTests.Crowds;

/// <summary>
/// A crowd at the login's door: 1,000 sockets at once against a TunnelServer process whose session sits behind a
/// company login (a real provider, oidc-provider), half opening the app (each a challenge: the server pushes the
/// login's parameters to the provider and redirects) and half sending forged callbacks, from 1,000 addresses (the
/// server trusts 127.0.0.1 as a proxy). The server process, measured on its own, stays within its bound; every socket
/// gets a defined answer or a clean close; a visitor with a login cookie beside the crowd is served throughout. Measured
/// here: +30 MiB, probes max 167 ms; the bound is 96 MiB.
/// </summary>
public sealed class LoginCrowdTests
{
    private const int Crowd = 1000;

    [Fact]
    public async Task A_thousand_sockets_at_the_login_and_callback_at_once_keep_the_server_bounded_and_each_gets_a_defined_answer()
    {
        await using OidcProvider provider = await OidcProvider.StartAsync();
        await using LoginStack login = await LoginStack.StartAsync(provider.Issuer, ["--trusted-proxy", "127.0.0.1/32"]);
        using HttpClient probeHttp = CallerHttp.Create();
        string cookie = login.Cookie("probe@example.com", TimeSpan.FromHours(1));
        await ProbeAsync(probeHttp, login, cookie); // warm: the provider's discovery document is fetched once
        await using MemorySampler server = MemorySampler.Start(login.Stack.Server.Id);
        using var go = new SemaphoreSlim(0);
        Task<string>[] sockets = [.. Enumerable.Range(0, Crowd).Select(i => KnockAsync(login, i, go))];

        go.Release(Crowd);
        var probes = new List<double>();
        Task<string[]> all = Task.WhenAll(sockets);
        while (!all.IsCompleted)
        {
            probes.Add(await ProbeAsync(probeHttp, login, cookie));
            await Task.WhenAny(all, Task.Delay(100, TestContext.Current.CancellationToken)); // the probes' pace, cut short by the crowd's end
        }

        string[] outcomes = await all.WaitAsync(TimeSpan.FromMinutes(2));
        probes.Add(await ProbeAsync(probeHttp, login, cookie));
        Dictionary<string, int> counts = outcomes.GroupBy(o => o).ToDictionary(g => g.Key, g => g.Count());
        probes.Sort();
        TestContext.Current.TestOutputHelper?.WriteLine(
            $"outcomes {string.Join(", ", counts.OrderBy(c => c.Key).Select(c => $"{c.Key} x{c.Value}"))}; server +{server.PeakGrowthBytes >> 20} MiB; " +
            $"{probes.Count} probes, median {probes[probes.Count / 2]:F1} ms, max {probes[^1]:F1} ms");

        string[] app = [.. outcomes.Where((_, i) => i % 2 == 0)], callbacks = [.. outcomes.Where((_, i) => i % 2 == 1)];
        Assert.All(app, o => Assert.Contains(o, (string[])["302", "503", "closed"])); // sent to the login, or turned away cleanly
        Assert.All(callbacks, o => Assert.Contains(o, (string[])["401", "429", "503", "closed"])); // a forged callback never gets in
        Assert.True(app.Count(o => o == "302") >= Crowd / 4, $"only {app.Count(o => o == "302")} of {Crowd / 2} app requests were sent to the login");
        Assert.True(server.PeakGrowthBytes <= 96L << 20, $"the server grew by {server.PeakGrowthBytes >> 20} MiB under {Crowd} sockets at its login");
        Assert.False(login.Stack.Server.HasExited, "the server exited during the crowd");
    }

    /// <summary>One socket: the app (even <paramref name="i"/>) or a forged callback (odd), read to its close; returns the status, or "closed".</summary>
    private static async Task<string> KnockAsync(LoginStack login, int i, SemaphoreSlim go)
    {
        await go.WaitAsync();
        string path = i % 2 == 0 ? "/loadtest/get" : $"{OidcRule.CallbackPath}?code=c{i}&state=forged-{i}";
        string request = $"GET /session/{login.Session}{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 10.77.{i / 250}.{i % 250 + 1}\r\n" +
            "Connection: close\r\n\r\n";
        using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, login.Stack.PublicUrl.Port, cancel.Token);
        await socket.SendAsync(Encoding.ASCII.GetBytes(request), SocketFlags.None, cancel.Token);
        var head = new StringBuilder();
        byte[] buffer = new byte[4096];
        int read;
        while ((read = await socket.ReceiveAsync(buffer, SocketFlags.None, cancel.Token)) > 0)
        {
            head.Append(Encoding.Latin1.GetString(buffer, 0, read));
        }

        string text = head.ToString();
        return text.Length == 0 ? "closed" : text.StartsWith("HTTP/1.1 ", StringComparison.Ordinal) ? text.Substring(9, 3) : "garbled: " + text[..Math.Min(40, text.Length)];
    }

    private static async Task<double> ProbeAsync(HttpClient http, LoginStack login, string cookie)
    {
        long start = Stopwatch.GetTimestamp();
        using var request = new HttpRequestMessage(HttpMethod.Get, login.Stack.SessionUrl("/loadtest/ping"));
        request.Headers.Add("Cookie", cookie);
        using HttpResponseMessage pong = await http.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, pong.StatusCode);
        return Stopwatch.GetElapsedTime(start).TotalMilliseconds;
    }
}
