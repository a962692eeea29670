using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.EndToEndTests.Access;

/// <summary>Per-client credentials from a file: each token serves only its sessions, and a changed file applies at once.</summary>
public sealed class CredentialsFileTests : IAsyncLifetime
{
    private const string TeamA = "team-a-token-e2e-0123456789";
    private const string TeamB = "team-b-token-e2e-0123456789";
    private readonly string _path = Path.Combine(Path.GetTempPath(), $"tunnel2-credentials-{Guid.NewGuid():N}.json");
    private TunnelStack? _stack;

    private TunnelStack Stack => _stack!;

    public async ValueTask InitializeAsync()
    {
        await File.WriteAllTextAsync(_path, CredentialsJson(Client("team-a", TeamA, "team-a-*")));
        _stack = await TunnelStack.StartAsync($"--TunnelServer:CredentialsFile={_path}", "--TunnelServer:Limits:MaxFailedLoginsPerMinute=1000");
    }

    public async ValueTask DisposeAsync()
    {
        if (_stack is not null)
        {
            await _stack.DisposeAsync();
        }

        File.Delete(_path);
    }

    [Fact]
    public async Task A_token_serves_the_sessions_it_names_and_gets_403_and_a_log_line_for_another()
    {
        string mine = "team-a-" + Guid.NewGuid().ToString("N")[..8];
        string theirs = "team-b-" + Guid.NewGuid().ToString("N")[..8];
        await using RecordingBackend backend = await RecordingBackend.StartAsync();
        await using TunnelClientHandle client = await Stack.StartClientAsync(mine, backend.Url, token: TeamA);
        using var http = new HttpClient();
        Assert.Equal(System.Net.HttpStatusCode.OK, (await http.GetAsync(Stack.SessionUrl(mine, "/ping"))).StatusCode);

        await using TunnelClientHandle outside = Stack.StartClientWithoutWaiting(theirs, token: TeamA);
        await outside.StartAsync();
        await Eventually.WaitUntilAsync(() => outside.Stopping.IsCancellationRequested, "a client refused with 403 gives up");

        Assert.Equal(3, outside.Status.ExitCode);
        Assert.Empty(Stack.Registry.GetUplinks(theirs));
        Assert.Contains(CapturedLogs.Everything(), line => line.Contains("credential \"team-a\" may not serve session", StringComparison.Ordinal)
                                                           && line.Contains(theirs, StringComparison.Ordinal));
        Assert.DoesNotContain(CapturedLogs.Everything(), line => line.Contains(TeamA, StringComparison.Ordinal)); // tokens are never logged
    }

    [Fact]
    public async Task The_file_is_read_again_when_it_changes_and_a_broken_change_keeps_what_was_in_force()
    {
        string session = "team-b-" + Guid.NewGuid().ToString("N")[..8];
        Assert.StartsWith("HTTP/1.1 401", await LoginAsync(TeamB, session), StringComparison.Ordinal);

        await File.WriteAllTextAsync(_path, CredentialsJson(Client("team-a", TeamA, "team-a-*"), Client("team-b", TeamB, "team-b-*")));
        await Eventually.WaitUntilAsync(async () => (await LoginAsync(TeamB, session)).StartsWith("HTTP/1.1 101", StringComparison.Ordinal),
            "the new client's token is taken once the file changed");

        await File.WriteAllTextAsync(_path, "{ \"Clients\": [ ");
        await Eventually.WaitUntilAsync(() => CapturedLogs.Everything().Exists(line => line.Contains(_path, StringComparison.Ordinal) && line.Contains("cannot be used", StringComparison.Ordinal)),
            "the broken file is reported");
        Assert.StartsWith("HTTP/1.1 101", await LoginAsync(TeamB, session), StringComparison.Ordinal);

        await File.WriteAllTextAsync(_path, CredentialsJson(Client("team-a", TeamA, "team-a-*")));
        await Eventually.WaitUntilAsync(async () => (await LoginAsync(TeamB, session)).StartsWith("HTTP/1.1 401", StringComparison.Ordinal),
            "a removed token is refused from then on");
    }

    [Fact]
    public async Task A_token_rotates_without_downtime_and_uplinks_of_the_removed_one_are_revoked()
    {
        string session = "team-a-" + Guid.NewGuid().ToString("N")[..8];
        const string NewToken = "team-a-token-2027-0123456789";
        await using RecordingBackend backend = await RecordingBackend.StartAsync();
        await using TunnelClientHandle old = await Stack.StartClientAsync(session, backend.Url, token: TeamA);

        await File.WriteAllTextAsync(_path, CredentialsJson(Client("team-a", TeamA, "team-a-*"), Client("team-a-2027", NewToken, "team-a-*")));
        await Eventually.WaitUntilAsync(async () => (await LoginAsync(NewToken, "team-a-probe")).StartsWith("HTTP/1.1 101", StringComparison.Ordinal),
            "the new token is taken");
        await using TunnelClientHandle renewed = await Stack.StartClientAsync(session, backend.Url, token: NewToken);

        using var http = new HttpClient();
        using var stop = new CancellationTokenSource();
        int failed = 0, served = 0;
        Task probes = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                using HttpResponseMessage answer = await http.GetAsync(Stack.SessionUrl(session, "/probe"), CancellationToken.None);
                Interlocked.Increment(ref answer.IsSuccessStatusCode ? ref served : ref failed);
            }
        });

        await File.WriteAllTextAsync(_path, CredentialsJson(Client("team-a-2027", NewToken, "team-a-*")));
        await Eventually.WaitUntilAsync(() => old.Stopping.IsCancellationRequested, "the old token's client is revoked, logs in again and is refused");
        await Eventually.WaitUntilAsync(() => Volatile.Read(ref served) > 20, "requests keep being served after the revocation");
        await stop.CancelAsync();
        await probes;

        Assert.Equal(3, old.Status.ExitCode);
        Assert.Equal(0, failed);
        Assert.Single(Stack.Registry.GetUplinks(session));
        Assert.Contains(CapturedLogs.Everything(), line => line.Contains("revoked", StringComparison.Ordinal) && line.Contains(session, StringComparison.Ordinal));
    }

    [Fact]
    public async Task Logins_outside_a_token_s_sessions_count_as_failures_until_the_address_gets_429()
    {
        string path = Path.Combine(Path.GetTempPath(), $"tunnel2-credentials-{Guid.NewGuid():N}.json");
        await File.WriteAllTextAsync(path, CredentialsJson(Client("team-a", TeamA, "team-a-*")));
        await using TunnelStack stack = await TunnelStack.StartAsync($"--TunnelServer:CredentialsFile={path}", "--TunnelServer:Limits:MaxFailedLoginsPerMinute=2");
        try
        {
            for (int i = 0; i < 2; i++)
            {
                using RawTunnelConnection outside = await RawTunnelConnection.OpenAsync(stack.TunnelUrl);
                Assert.StartsWith("HTTP/1.1 403", await outside.HandshakeAsync($"Authorization: Bearer {TeamA}\r\n", "team-b-x"), StringComparison.Ordinal);
            }

            using RawTunnelConnection inside = await RawTunnelConnection.OpenAsync(stack.TunnelUrl);
            string answer = await inside.HandshakeAsync($"Authorization: Bearer {TeamA}\r\n", "team-a-x");
            Assert.StartsWith("HTTP/1.1 429", answer, StringComparison.Ordinal);
            Assert.Matches("Retry-After: [1-9][0-9]*\r\n", answer);
        }
        finally
        {
            File.Delete(path);
        }
    }

    public static string CredentialsJson(params string[] clients) => CredentialsJson(clients, visitors: []);

    public static string CredentialsJson(string[] clients, string[] visitors) =>
        $$"""{ "Clients": [ {{string.Join(", ", clients)}} ], "Visitors": [ {{string.Join(", ", visitors)}} ] }""";

    public static string Client(string name, string token, params string[] sessions) =>
        $$"""{ "Name": "{{name}}", "TokenHash": "{{TokenHash.Create(token)}}", "Sessions": [ {{string.Join(", ", sessions.Select(s => $"\"{s}\""))}} ] }""";

    private async Task<string> LoginAsync(string token, string session)
    {
        using RawTunnelConnection connection = await RawTunnelConnection.OpenAsync(Stack.TunnelUrl);
        return await connection.HandshakeAsync($"Authorization: Bearer {token}\r\n", session);
    }
}
