using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Hosting;

/// <summary>The real executables' command line: usage on --help, exit code 2 and every failure named on a bad setting.</summary>
public sealed class CommandLineTests
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData("server", "--help")]
    [InlineData("client", "-h")]
    public async Task Help_prints_the_usage_and_exits_0_without_starting(string which, string flag)
    {
        await using TunnelProcess process = Start(which, flag);

        Assert.Equal(0, await process.WaitForExitAsync(ExitTimeout));
        Assert.Contains(which == "server" ? "Usage: TunnelServer" : "Usage: TunnelClient", process.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("listening", process.Output, StringComparison.OrdinalIgnoreCase);
    }

    [Theory]
    [InlineData("server", "unknown option '--no-such-flag'", "--no-such-flag", "1")]
    [InlineData("client", "unknown option '--tokne'; did you mean '--token'?", "--tokne", "secret", "--session", "demo")]
    [InlineData("client", "unknown option '--TunnelClient:MaxQeue'", "--TunnelClient:MaxQeue=5")]
    [InlineData("server", "option '--token' needs a value", "--token")]
    public async Task An_unknown_option_or_one_without_its_value_exits_2_naming_it_before_anything_starts(string which, string expected, params string[] args)
    {
        await using TunnelProcess process = Start(which, args);

        Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
        Assert.Contains("invalid command line:", process.Output, StringComparison.Ordinal);
        Assert.Contains(expected, process.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("listening", process.Output, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task The_short_form_serves_a_local_port_under_a_new_session_and_logs_its_public_URL()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using TunnelProcess client = Start("client", "http", stack.BackendUrl.Port.ToString(System.Globalization.CultureInfo.InvariantCulture),
            "--server", stack.TunnelUrl.ToString().TrimEnd('/'), "--token", TunnelStack.Token);

        string? url = await Eventually.ValueAsync(() => Task.FromResult(PublicUrlIn(client.Output)), found => found is not null,
            "the client logs where its session is reached");
        Assert.StartsWith(new Uri(stack.PublicUrl, "/session/").ToString(), url, StringComparison.Ordinal);
        using var http = CallerHttp.Create();
        Assert.Equal("pong", await http.GetStringAsync(new Uri(new Uri(url!), "loadtest/ping")));
        Assert.Contains($"-> http://127.0.0.1:{stack.BackendUrl.Port}", client.Output, StringComparison.Ordinal);

        static string? PublicUrlIn(string output) =>
            System.Text.RegularExpressions.Regex.Match(output, @"Forwarding (http://\S+)") is { Success: true } match ? match.Groups[1].Value : null;
    }

    [Fact]
    public async Task A_server_setting_that_does_not_parse_exits_2_and_names_it()
    {
        await using TunnelProcess process = Start("server", "--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0",
            "--TunnelServer:Uplink:KeepAliveTimeout=soon");

        Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
        Assert.Contains("TunnelServer: invalid configuration:", process.Output, StringComparison.Ordinal);
        Assert.Contains("KeepAliveTimeout", process.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_wrong_per_session_entry_exits_2_with_a_line_naming_its_key()
    {
        await using TunnelProcess process = Start("server", "--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0",
            "--token", TunnelStack.Token, "--ProxyEntry:Sessions:db:MaxTcpConnections=0");

        Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
        Assert.Contains("ProxyEntry:Sessions:db:MaxTcpConnections must be 1 to 1000000, not 0.", process.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("listening", process.Output, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task A_client_setting_out_of_range_exits_2_and_lists_every_failure()
    {
        await using TunnelProcess process = Start("client", "--max-concurrency", "0");

        Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
        Assert.Contains("TunnelClient: invalid configuration:", process.Output, StringComparison.Ordinal);
        Assert.Contains("MaxConcurrency", process.Output, StringComparison.Ordinal);
        Assert.Contains("Session", process.Output, StringComparison.Ordinal); // no --session either: both are listed
    }

    [Fact]
    public async Task A_server_with_an_https_url_and_no_certificate_exits_2_and_says_what_is_missing()
    {
        await using TunnelProcess process = Start("server", "--public-url", "https://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0",
            "--token", TunnelStack.Token);

        Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
        Assert.Contains("needs a certificate: set --certificate and --certificate-key", process.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_server_whose_certificate_file_is_missing_exits_2_and_names_the_file()
    {
        string missing = Path.Combine(Path.GetTempPath(), $"{Guid.NewGuid()}.pem");
        await using TunnelProcess process = Start("server", "--public-url", "https://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0",
            "--token", TunnelStack.Token, "--certificate", missing, "--certificate-key", missing);

        Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
        Assert.Contains($"The certificate '{missing}'", process.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_client_that_does_not_trust_the_servers_certificate_exits_4_and_says_why()
    {
        using var certificates = new TestCertificates();
        TestCertificates.PemPair certificate = certificates.IssueSelfSigned();
        await using TunnelStack stack = await TunnelStack.StartAsync(
            "--TunnelServer:Listeners:TunnelUrl=https://127.0.0.1:0",
            $"--TunnelServer:Tls:Certificate={certificate.CertificatePath}",
            $"--TunnelServer:Tls:CertificateKey={certificate.KeyPath}");

        await using TunnelProcess client = Start("client", "--server", stack.TunnelUrl.ToString().TrimEnd('/'), "--session", "untrusting",
            "--token", TunnelStack.Token, "--backend", stack.BackendUrl.ToString().TrimEnd('/'));

        Assert.Equal(4, await client.WaitForExitAsync(ExitTimeout));
        Assert.Contains("was refused", client.Output, StringComparison.Ordinal);
        Assert.Contains("--ca-certificate", client.Output, StringComparison.Ordinal);
    }

    private static TunnelProcess Start(string which, params string[] args) =>
        which == "server" ? TunnelProcess.StartServer(which, args) : TunnelProcess.StartClient(which, args);
}
