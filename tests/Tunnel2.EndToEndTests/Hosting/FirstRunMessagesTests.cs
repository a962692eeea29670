using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Access;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.EndToEndTests.Tcp;
using Tunnel2.Hosting;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.EndToEndTests.Hosting;

/// <summary>
/// What a user meets in the first hour, against the built executables (issue 54): each message is asserted as the
/// exact line it prints, with the exit code.
/// </summary>
public sealed class FirstRunMessagesTests
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(30);
    private const string ClientService = "Tunnel2.TunnelClient.Uplinks.TunnelClientService";

    [Theory]
    [InlineData("server", "TunnelServer")]
    [InlineData("client", "TunnelClient")]
    public async Task Version_prints_the_release_on_one_line_and_exits_0(string which, string name)
    {
        await using TunnelProcess process = Start(which, "--version");

        Assert.Equal(0, await process.WaitForExitAsync(ExitTimeout));
        string expected = $"{name} {ProductVersion.Of(typeof(ProgramHost).Assembly)}";
        Assert.Equal([expected], Lines(process.Output));
        Assert.Matches(@"^\S+ \d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$", expected);
        Assert.DoesNotContain("1.0.0", expected, StringComparison.Ordinal); // the SDK's default, before the one version
    }

    [Theory]
    [InlineData("server", "TunnelServer:Uplink:MaxStreams")]
    [InlineData("client", "TunnelClient:Uplink:Count")]
    public async Task Help_shows_the_common_options_and_help_all_every_setting(string which, string deepKey)
    {
        await using TunnelProcess help = Start(which, "--help");
        await using TunnelProcess all = Start(which, "--help-all");

        Assert.Equal(0, await help.WaitForExitAsync(ExitTimeout));
        Assert.Equal(0, await all.WaitForExitAsync(ExitTimeout));
        Assert.Contains("Common options:", help.Output, StringComparison.Ordinal);
        Assert.InRange(Lines(help.Output).Count, 10, 30);
        Assert.DoesNotContain(deepKey, help.Output, StringComparison.Ordinal);
        Assert.Contains(deepKey, all.Output, StringComparison.Ordinal);
        Assert.Contains("--help-all", help.Output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--public-url")]
    [InlineData("--tunnel-url")]
    public async Task A_server_port_in_use_exits_2_with_one_line_naming_the_option(string option)
    {
        using Socket held = HeldPort(listening: true);
        string url = $"http://127.0.0.1:{((IPEndPoint)held.LocalEndPoint!).Port}";
        string[] urls = option == "--public-url" ? ["--public-url", url, "--tunnel-url", "http://127.0.0.1:0"] : ["--public-url", "http://127.0.0.1:0", "--tunnel-url", url];

        await using TunnelProcess server = TunnelProcess.StartServer("server", [.. urls, "--token", TunnelStack.Token]);

        Assert.Equal(2, await server.WaitForExitAsync(ExitTimeout));
        Assert.Equal([$"error: {option} {url}: address already in use; choose another port or stop the process using it"], Lines(server.Output));
    }

    [Fact]
    public async Task A_client_inspector_port_in_use_exits_2_with_one_line_naming_the_option()
    {
        using Socket held = HeldPort(listening: true);
        string url = $"http://127.0.0.1:{((IPEndPoint)held.LocalEndPoint!).Port}";

        await using TunnelProcess client = TunnelProcess.StartClient("client", "--server", "http://127.0.0.1:1", "--session", "inspected", "--token", TunnelStack.Token,
            "--inspect-url", url);

        Assert.Equal(2, await client.WaitForExitAsync(ExitTimeout));
        Assert.Contains($"error: --inspect-url {url}: address already in use; choose another port or stop the process using it", Lines(client.Output));
        Assert.DoesNotContain("Exception", client.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_client_pointed_at_the_public_port_is_told_the_tunnel_port_and_exits_3()
    {
        await using TunnelProcess server = StartServer();
        (Uri publicUrl, Uri tunnelUrl) = await server.WaitForServerUrlsAsync();

        await using TunnelProcess client = StartClient(publicUrl, "web");

        Assert.Equal(3, await client.WaitForExitAsync(ExitTimeout));
        AssertLogLine(client.Output, "FTL", ClientService,
            $"--server points at TunnelServer's public port. Clients connect to the tunnel port {tunnelUrl.Port} (the server's --tunnel-url), not to the public port: " +
            $"use --server http://127.0.0.1:{tunnelUrl.Port}. Not retrying.");
    }

    [Fact]
    public async Task A_WebSocket_client_pointed_at_the_public_port_is_told_so_from_the_problem_header_and_exits_3()
    {
        await using TunnelProcess server = StartServer();
        (Uri publicUrl, _) = await server.WaitForServerUrlsAsync();

        await using TunnelProcess client = StartClient(publicUrl, "web", "--transport", "websocket");

        Assert.Equal(3, await client.WaitForExitAsync(ExitTimeout));
        AssertLogLine(client.Output, "FTL", ClientService,
            "--server points at TunnelServer's public port. Point --server at its tunnel port (the server's --tunnel-url). Not retrying.");
    }

    [Fact]
    public async Task A_TCP_login_to_a_server_without_TCP_ports_says_so_and_exits_3()
    {
        await using TunnelProcess server = StartServer();
        (_, Uri tunnelUrl) = await server.WaitForServerUrlsAsync();

        await using TunnelProcess client = StartClient(tunnelUrl, "db", "--tcp", "5432");

        Assert.Equal(3, await client.WaitForExitAsync(ExitTimeout));
        AssertLogLine(client.Output, "FTL", ClientService,
            "The server has no TCP ports. This server gives session 'db' no TCP port: its operator sets TunnelServer:Tcp:PortRange, or a TcpPorts entry in the " +
            "credentials file. Start the server with --tcp-ports (e.g. --tcp-ports 20000-20099), or run this client without --tcp. Not retrying.");
        Assert.DoesNotContain("{", client.Output, StringComparison.Ordinal); // no raw JSON
    }

    [Fact]
    public async Task A_wrong_token_is_named_and_exits_3()
    {
        await using TunnelProcess server = StartServer();
        (_, Uri tunnelUrl) = await server.WaitForServerUrlsAsync();

        await using TunnelProcess client = TunnelProcess.StartClient("client", "--server", tunnelUrl.ToString().TrimEnd('/'), "--session", "web",
            "--token", "not-the-servers-token-0123456789");

        Assert.Equal(3, await client.WaitForExitAsync(ExitTimeout));
        AssertLogLine(client.Output, "FTL", ClientService,
            "The server refused the token (401). This server knows no such token: it takes its --token, or a client's token in its credentials file " +
            "(sent as Authorization: Bearer <token>). Check --token (or TunnelClient__Token). Not retrying.");
    }

    [Fact]
    public async Task A_session_the_token_may_not_serve_is_named_and_exits_3()
    {
        string path = Path.Combine(Path.GetTempPath(), $"tunnel2-credentials-{Guid.NewGuid():N}.json");
        await File.WriteAllTextAsync(path, CredentialsFileTests.CredentialsJson(CredentialsFileTests.Client("team-a", TunnelStack.Token, "team-a-*")));
        try
        {
            await using TunnelProcess server = TunnelProcess.StartServer("server", "--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0",
                "--credentials", path);
            (_, Uri tunnelUrl) = await server.WaitForServerUrlsAsync();

            await using TunnelProcess client = StartClient(tunnelUrl, "team-b-web");

            Assert.Equal(3, await client.WaitForExitAsync(ExitTimeout));
            AssertLogLine(client.Output, "FTL", ClientService,
                "The server refused the session for this token. This token may not serve session 'team-b-web'. Use a session this token may serve " +
                "(its Sessions in the server's credentials file), or the token of that session. Not retrying.");
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public async Task A_server_of_another_protocol_version_is_named_and_exits_3()
    {
        // A server of a later release: it answers every login as TunnelServer does when it shares no version with the client.
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        byte[] refusal = HandshakeAnswer.Refusal(new HandshakeRefusal(400, "bad-version", "Unsupported protocol version",
            "This server speaks Tunnel2-Version 9; the client offered '3, 4, 5'."), "/tunnel2/connect");
        Task answering = AnswerOnceAsync(listener, refusal);

        await using TunnelProcess client = StartClient(new Uri($"http://127.0.0.1:{((IPEndPoint)listener.LocalEndpoint).Port}"), "web");

        Assert.Equal(3, await client.WaitForExitAsync(ExitTimeout));
        await answering;
        AssertLogLine(client.Output, "FTL", ClientService,
            "The server speaks another version of the Tunnel2 protocol. This server speaks Tunnel2-Version 9; the client offered '3, 4, 5'. " +
            "Run a TunnelClient of the server's release (TunnelServer --version, TunnelClient --version). Not retrying.");
    }

    [Fact]
    public async Task The_first_screen_has_the_public_URL_on_a_plain_line_and_no_hosting_lines_or_jargon()
    {
        await using ProcessStack stack = await ProcessStack.StartAsync("first-screen");

        Match forwarding = await stack.Client.WaitForOutputAsync(new Regex(@"^Forwarding (?<url>\S+) -> (?<backend>http://127\.0\.0\.1:\d+)$", RegexOptions.Multiline));
        Assert.Equal(new Uri(stack.PublicUrl, "/session/first-screen/").ToString(), forwarding.Groups["url"].Value);
        AssertLogLine(stack.Client.Output, "INF", ClientService,
            $"Connected to {stack.TunnelUrl.Authority}: session first-screen -> {forwarding.Groups["backend"].Value}");
        string[] hidden = ["Application started", "Hosting environment", "Content root path", "This node is", "over upgrade", "GoAway"];
        foreach (string output in new[] { stack.Client.Output, stack.Server.Output })
        {
            Assert.All(hidden, text => Assert.DoesNotContain(text, output, StringComparison.Ordinal));
        }
    }

    [Fact]
    public async Task A_TCP_only_client_names_only_its_TCP_target()
    {
        using Socket target = HeldPort(listening: true);
        int port = ((IPEndPoint)target.LocalEndPoint!).Port;
        await using TunnelProcess server = StartServer(TcpTunnel.PortRange());
        (_, Uri tunnelUrl) = await server.WaitForServerUrlsAsync();

        await using TunnelProcess client = StartClient(tunnelUrl, "db", "--tcp", $"127.0.0.1:{port}");

        await client.WaitForOutputAsync(new Regex($@"^Forwarding tcp://127\.0\.0\.1:\d+ -> 127\.0\.0\.1:{port}$", RegexOptions.Multiline));
        AssertLogLine(client.Output, "INF", ClientService, $"Connected to {tunnelUrl.Authority}: session db -> tcp://127.0.0.1:{port}");
        Assert.DoesNotContain("12007", client.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_backend_down_at_start_gets_one_warning_and_an_info_once_it_answers()
    {
        using Socket backend = HeldPort(listening: false); // bound, not listening: connections are refused
        string backendUrl = $"http://127.0.0.1:{((IPEndPoint)backend.LocalEndPoint!).Port}";
        await using TunnelProcess server = StartServer();
        (_, Uri tunnelUrl) = await server.WaitForServerUrlsAsync();

        await using TunnelProcess client = StartClient(tunnelUrl, "late", "--backend", backendUrl);
        const string Source = "Tunnel2.TunnelClient.Backends.BackendStartCheck";
        await client.WaitForOutputAsync(LogLine("WRN", Source,
            $"Backend {backendUrl} does not answer (connection refused): callers get 502 until it does. Still serving; checking again"));
        await client.WaitForOutputAsync(new Regex(@"^Forwarding ", RegexOptions.Multiline));
        backend.Listen();

        await client.WaitForOutputAsync(LogLine("INF", Source, $"Backend {backendUrl} answers now"), TimeSpan.FromSeconds(30));
        Assert.False(client.HasExited);
        Assert.Single(Regex.Matches(client.Output, "does not answer"));
    }

    private static TunnelProcess Start(string which, params string[] args) =>
        which == "server" ? TunnelProcess.StartServer(which, args) : TunnelProcess.StartClient(which, args);

    private static TunnelProcess StartServer(params string[] args) =>
        TunnelProcess.StartServer("server", ["--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0", "--token", TunnelStack.Token, .. args]);

    private static TunnelProcess StartClient(Uri server, string session, params string[] args) =>
        TunnelProcess.StartClient("client", ["--server", server.ToString().TrimEnd('/'), "--session", session, "--token", TunnelStack.Token, .. args]);

    /// <summary>A loopback port this test holds: listening (a port in use, a TCP target), or only bound (a backend that refuses).</summary>
    private static Socket HeldPort(bool listening)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        if (listening)
        {
            socket.Listen();
        }

        return socket;
    }

    private static List<string> Lines(string output) => [.. output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(line => line.TrimEnd('\r'))];

    private static Regex LogLine(string level, string source, string message) =>
        new($@"^\[\d\d:\d\d:\d\d {level}\] {Regex.Escape(source)}: {Regex.Escape(message)}$", RegexOptions.Multiline);

    private static void AssertLogLine(string output, string level, string source, string message) =>
        Assert.True(LogLine(level, source, message).IsMatch(output), $"no line '[hh:mm:ss {level}] {source}: {message}' in:\n{output}");

    private static async Task AnswerOnceAsync(TcpListener listener, byte[] answer)
    {
        using Socket socket = await listener.AcceptSocketAsync();
        var head = new StringBuilder();
        var buffer = new byte[4096];
        while (!head.ToString().Contains("\r\n\r\n", StringComparison.Ordinal))
        {
            int read = await socket.ReceiveAsync(buffer);
            if (read == 0)
            {
                return;
            }

            head.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }

        await socket.SendAsync(answer);
    }
}
