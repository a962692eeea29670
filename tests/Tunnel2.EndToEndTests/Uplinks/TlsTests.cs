using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelServer.Hosting;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.EndToEndTests.Uplinks;

/// <summary>
/// TLS on both of the server's ports with certificates made in code: HTTP/2 and HTTP/1.1 by ALPN on the public side,
/// cleartext HTTP/2 on request, WebSockets over HTTP/2 (RFC 8441), the client's trust decisions (system store, a
/// private CA, a pinned fingerprint) with exit code 4 and a reason on refusal, and a certificate renewed on disk.
/// </summary>
public sealed class TlsTests
{
    private const string Session = "tls";

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Https_on_both_ports_serves_HTTP2_and_HTTP11_by_ALPN_and_carries_a_body_both_ways()
    {
        using var certificates = new TestCertificates();
        TestCertificates.PemPair server = certificates.IssueServer();
        await using TunnelStack stack = await StartHttpsStackAsync(server);
        await stack.StartClientAsync(Session, extraArgs: ["--ca-certificate", certificates.AuthorityPath]);
        using var http = new HttpClient(certificates.CreateTrustingHandler());

        foreach (Version version in new[] { HttpVersion.Version20, HttpVersion.Version11 })
        {
            using HttpResponseMessage answer = await http.SendAsync(Exactly(version, stack.SessionUrl(Session, "/loadtest/ping")), Token);
            Assert.Equal(HttpStatusCode.OK, answer.StatusCode);
            Assert.Equal(version, answer.Version);
            Assert.Equal("pong", await answer.Content.ReadAsStringAsync(Token));
        }

        byte[] body = RandomNumberGenerator.GetBytes(1024 * 1024);
        using HttpRequestMessage echo = Exactly(HttpVersion.Version20, stack.SessionUrl(Session, "/loadtest/echo"), HttpMethod.Post);
        echo.Content = new ByteArrayContent(body);
        using HttpResponseMessage echoed = await http.SendAsync(echo, Token);
        Assert.Equal(HttpStatusCode.OK, echoed.StatusCode);
        Assert.Equal(body, await echoed.Content.ReadAsByteArrayAsync(Token));
        Assert.Equal("https", stack.TunnelUrl.Scheme);
    }

    [Fact]
    public async Task Both_ports_send_the_intermediate_from_the_certificate_file_so_a_client_trusting_only_the_root_connects()
    {
        using var certificates = new TestCertificates();
        await using TunnelStack stack = await StartHttpsStackAsync(certificates.IssueServerViaIntermediate());
        await stack.StartClientAsync(Session, extraArgs: ["--ca-certificate", certificates.AuthorityPath]); // the tunnel port
        using var http = new HttpClient(certificates.CreateTrustingHandler());

        Assert.Equal("pong", await http.GetStringAsync(stack.SessionUrl(Session, "/loadtest/ping"), Token)); // the public port
    }

    [Fact]
    public async Task Cleartext_HTTP2_with_prior_knowledge_is_served_on_its_own_port_beside_HTTP11()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--TunnelServer:Listeners:PublicH2cUrl=http://127.0.0.1:0");
        await stack.StartClientAsync(Session);
        Uri h2c = stack.Server.Services.GetRequiredService<ServerEndpoints>().PublicH2cUrl!;
        using HttpClient http = CallerHttp.Create();

        foreach ((Uri origin, Version version) in new[] { (h2c, HttpVersion.Version20), (stack.PublicUrl, HttpVersion.Version11) })
        {
            using HttpResponseMessage answer = await http.SendAsync(Exactly(version, new Uri(origin, $"/session/{Session}/loadtest/ping")), Token);
            Assert.Equal(HttpStatusCode.OK, answer.StatusCode);
            Assert.Equal(version, answer.Version);
            Assert.Equal("pong", await answer.Content.ReadAsStringAsync(Token));
        }
    }

    [Fact]
    public async Task A_WebSocket_over_HTTP2_extended_CONNECT_reaches_an_HTTP11_WebSocket_backend()
    {
        using var certificates = new TestCertificates();
        await using TunnelStack stack = await StartHttpsStackAsync(certificates.IssueServer());
        await stack.StartClientAsync(Session, extraArgs: ["--ca-certificate", certificates.AuthorityPath]);
        using var invoker = new HttpMessageInvoker(certificates.CreateTrustingHandler());
        using var socket = new ClientWebSocket();
        socket.Options.HttpVersion = HttpVersion.Version20;
        socket.Options.HttpVersionPolicy = HttpVersionPolicy.RequestVersionExact;
        socket.Options.CollectHttpResponseDetails = true;
        var url = new UriBuilder(stack.SessionUrl(Session, "/loadtest/ws")) { Scheme = Uri.UriSchemeWss }.Uri;

        await socket.ConnectAsync(url, invoker, Token);

        Assert.Equal(HttpStatusCode.OK, socket.HttpStatusCode); // RFC 8441: the extended CONNECT's answer is a 200, not a 101
        await WebSocketEcho.TextAsync(socket, 20, i => $"over h2 {i}", Token);

        byte[] large = RandomNumberGenerator.GetBytes(1024 * 1024);
        await socket.SendAsync(large, WebSocketMessageType.Binary, endOfMessage: true, Token);
        Assert.Equal(large, (await WebSocketMessages.ReceiveAsync(socket, Token)).Message);
        await WebSocketEcho.CloseAsync(socket, Token);
    }

    [Fact]
    public async Task The_client_over_the_WebSocket_transport_speaks_wss_with_a_private_CA()
    {
        using var certificates = new TestCertificates();
        await using TunnelStack stack = await StartHttpsStackAsync(certificates.IssueServer());
        await stack.StartClientAsync(Session, extraArgs: ["--transport", "websocket", "--ca-certificate", certificates.AuthorityPath]);
        using var http = new HttpClient(certificates.CreateTrustingHandler());

        Assert.Equal("pong", await http.GetStringAsync(stack.SessionUrl(Session, "/loadtest/ping"), Token));
        Assert.Contains("(websocket)", stack.Registry.GetUplinks(Session).Single().Name, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("untrusted", "trust its CA with --ca-certificate")]
    [InlineData("wrong-name", "not issued for '127.0.0.1'")]
    [InlineData("wrong-pin", "not the pinned")]
    public async Task A_certificate_the_client_does_not_trust_stops_it_with_exit_code_4_and_the_reason(string kind, string reason)
    {
        using var certificates = new TestCertificates();
        TestCertificates.PemPair server = kind == "wrong-name" ? certificates.IssueServer(dnsName: "elsewhere.example") : certificates.IssueServer();
        await using TunnelStack stack = await StartHttpsStackAsync(server);
        string[] trust = kind switch
        {
            "untrusted" => [], // the system store does not know the test CA
            "wrong-name" => ["--ca-certificate", certificates.AuthorityPath],
            _ => ["--server-certificate-sha256", Convert.ToHexString(SHA256.HashData(Encoding.ASCII.GetBytes("another certificate")))],
        };

        await using TunnelClientHandle client = stack.StartClientWithoutWaiting(Session, extraArgs: trust);
        await client.StartAsync();

        await Eventually.WaitUntilAsync(() => client.Stopping.IsCancellationRequested, "the client gives up on a refused certificate");
        Assert.Equal(4, client.Status.ExitCode);
        Assert.Contains(reason, client.Status.LastDisconnectReason, StringComparison.Ordinal);
        Assert.Equal(0, client.Status.ConnectCount);
        Assert.Empty(stack.Registry.GetUplinks(Session));
    }

    [Fact]
    public async Task A_pinned_self_signed_certificate_is_trusted_without_any_CA()
    {
        using var certificates = new TestCertificates();
        TestCertificates.PemPair server = certificates.IssueSelfSigned();
        await using TunnelStack stack = await StartHttpsStackAsync(server);
        string colonSeparated = string.Join(':', Enumerable.Range(0, server.Sha256.Length / 2).Select(i => server.Sha256.Substring(i * 2, 2)));

        await stack.StartClientAsync(Session, extraArgs: ["--server-certificate-sha256", colonSeparated]);

        Assert.Single(stack.Registry.GetUplinks(Session));
    }

    [Fact]
    public async Task A_renewed_certificate_on_disk_is_served_to_new_connections_while_the_uplink_stays_up()
    {
        using var certificates = new TestCertificates();
        TestCertificates.PemPair first = certificates.IssueServer();
        TestCertificates.PemPair renewed = certificates.IssueServer();
        await using TunnelStack stack = await StartHttpsStackAsync(first);
        await stack.StartClientAsync(Session, extraArgs: ["--ca-certificate", certificates.AuthorityPath]);
        var uplink = stack.Registry.GetUplinks(Session).Single();
        Assert.Equal(first.Sha256, await PresentedCertificateAsync(stack.PublicUrl, certificates));

        File.Copy(renewed.KeyPath, first.KeyPath, overwrite: true);
        File.Copy(renewed.CertificatePath, first.CertificatePath, overwrite: true);

        await Eventually.WaitUntilAsync(async () => await PresentedCertificateAsync(stack.PublicUrl, certificates) == renewed.Sha256,
            "the public port presents the renewed certificate");
        await Eventually.WaitUntilAsync(async () => await PresentedCertificateAsync(stack.TunnelUrl, certificates) == renewed.Sha256,
            "the tunnel port presents the renewed certificate");
        Assert.Same(uplink, stack.Registry.GetUplinks(Session).Single());
        using var http = new HttpClient(certificates.CreateTrustingHandler());
        Assert.Equal("pong", await http.GetStringAsync(stack.SessionUrl(Session, "/loadtest/ping"), Token));
    }

    [Fact]
    public async Task Cleartext_bytes_on_the_TLS_tunnel_port_close_that_connection_and_the_server_keeps_serving()
    {
        using var certificates = new TestCertificates();
        await using TunnelStack stack = await StartHttpsStackAsync(certificates.IssueServer());
        await stack.StartClientAsync(Session, extraArgs: ["--ca-certificate", certificates.AuthorityPath]);

        using (var raw = new TcpClient())
        {
            await raw.ConnectAsync(stack.TunnelUrl.Host, stack.TunnelUrl.Port, Token);
            NetworkStream stream = raw.GetStream();
            await stream.WriteAsync(Encoding.ASCII.GetBytes("GET /tunnel2/connect HTTP/1.1\r\nHost: x\r\n\r\n"), Token);
            byte[] buffer = new byte[1024];
            int read;
            try
            {
                read = await stream.ReadAsync(buffer, Token).AsTask().WaitAsync(TimeSpan.FromSeconds(15), Token);
            }
            catch (IOException)
            {
                read = 0; // reset instead of a clean close: closed either way
            }

            Assert.True(read == 0 || buffer[0] == 0x15, "the server closes, or answers with a TLS alert record"); // 0x15 = alert
        }

        using var http = new HttpClient(certificates.CreateTrustingHandler());
        Assert.Equal("pong", await http.GetStringAsync(stack.SessionUrl(Session, "/loadtest/ping"), Token));
    }

    /// <summary>A request that must go in exactly this HTTP version (no downgrade, no upgrade).</summary>
    private static HttpRequestMessage Exactly(Version version, Uri url, HttpMethod? method = null) => new(method ?? HttpMethod.Get, url)
    {
        Version = version,
        VersionPolicy = HttpVersionPolicy.RequestVersionExact,
    };

    [Fact]
    public async Task Over_one_HTTP2_connection_a_download_nobody_reads_does_not_hold_up_1000_requests_beside_it()
    {
        const long downloadBytes = 256L * 1024 * 1024;
        using var certificates = new TestCertificates();
        await using TunnelStack stack = await StartHttpsStackAsync(certificates.IssueServer());
        await stack.StartClientAsync(Session, extraArgs: ["--ca-certificate", certificates.AuthorityPath]);
        using var http = new HttpClient(certificates.CreateTrustingHandler()); // one HTTP/2 connection for everything (no second one is allowed)
        http.DefaultRequestVersion = HttpVersion.Version20;
        http.DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact;

        using HttpResponseMessage stalled = await http.GetAsync(stack.SessionUrl(Session, $"/loadtest/bytes/{downloadBytes}"),
            HttpCompletionOption.ResponseHeadersRead, Token); // its body is left unread while the crowd runs
        HttpStatusCode[] crowd = await Task.WhenAll(Enumerable.Range(0, 1000).Select(async _ =>
        {
            using HttpResponseMessage ping = await http.GetAsync(stack.SessionUrl(Session, "/loadtest/ping"), Token);
            return ping.StatusCode;
        })).WaitAsync(TimeSpan.FromSeconds(60), Token);

        Assert.All(crowd, status => Assert.Equal(HttpStatusCode.OK, status));
        Assert.Equal(HttpVersion.Version20, stalled.Version);
        await using Stream body = await stalled.Content.ReadAsStreamAsync(Token);
        byte[] buffer = new byte[256 * 1024];
        long total = 0;
        int read;
        while ((read = await body.ReadAsync(buffer, Token)) > 0)
        {
            total += read;
        }

        Assert.Equal(downloadBytes, total); // held back by flow control, not lost
    }

    [Fact]
    public async Task A_crowd_of_300_connections_that_never_start_TLS_does_not_keep_a_client_from_logging_in_and_each_is_closed()
    {
        using var certificates = new TestCertificates();
        TestCertificates.PemPair certificate = certificates.IssueServer();
        await using TunnelStack stack = await TunnelStack.StartAsync(
            "--TunnelServer:Listeners:TunnelUrl=https://127.0.0.1:0",
            "--TunnelServer:Limits:HandshakeTimeout=00:00:03",
            $"--TunnelServer:Tls:Certificate={certificate.CertificatePath}",
            $"--TunnelServer:Tls:CertificateKey={certificate.KeyPath}");
        var silent = new List<TcpClient>();
        try
        {
            for (int i = 0; i < 300; i++)
            {
                var tcp = new TcpClient();
                silent.Add(tcp);
                await tcp.ConnectAsync(stack.TunnelUrl.Host, stack.TunnelUrl.Port, Token);
            }

            // While all 300 hold a TLS handshake open without a ClientHello, a real client logs in over TLS and serves.
            await using TunnelClientHandle client = await stack.StartClientAsync("beside-silent-tls", extraArgs: ["--ca-certificate", certificates.AuthorityPath]);
            using HttpClient http = CallerHttp.Create();
            Assert.Equal("pong", await http.GetStringAsync(stack.SessionUrl("beside-silent-tls", "/loadtest/ping"), Token));

            bool[] closed = await Task.WhenAll(silent.Select(async tcp =>
            {
                try
                {
                    return await tcp.GetStream().ReadAsync(new byte[16], Token).AsTask().WaitAsync(TimeSpan.FromSeconds(30), Token) == 0;
                }
                catch (IOException)
                {
                    return true; // reset: closed too
                }
            }));
            Assert.All(closed, Assert.True);
            Assert.Single(stack.Registry.GetAllUplinks());
        }
        finally
        {
            silent.ForEach(tcp => tcp.Dispose());
        }
    }

    private static Task<TunnelStack> StartHttpsStackAsync(TestCertificates.PemPair certificate) => TunnelStack.StartAsync(
        "--TunnelServer:Listeners:PublicUrl=https://127.0.0.1:0",
        "--TunnelServer:Listeners:TunnelUrl=https://127.0.0.1:0",
        $"--TunnelServer:Tls:Certificate={certificate.CertificatePath}",
        $"--TunnelServer:Tls:CertificateKey={certificate.KeyPath}");

    /// <summary>The SHA-256 of the certificate a fresh TLS connection to <paramref name="url"/> is shown.</summary>
    private static async Task<string> PresentedCertificateAsync(Uri url, TestCertificates certificates)
    {
        using var tcp = new TcpClient();
        await tcp.ConnectAsync(url.Host, url.Port, Token);
        await using var tls = new SslStream(tcp.GetStream(), leaveInnerStreamOpen: false);
        using SocketsHttpHandler trusting = certificates.CreateTrustingHandler();
        await tls.AuthenticateAsClientAsync(
            new SslClientAuthenticationOptions { TargetHost = url.Host, CertificateChainPolicy = trusting.SslOptions.CertificateChainPolicy },
            Token);
        return Convert.ToHexString(SHA256.HashData(tls.RemoteCertificate!.GetRawCertData()));
    }
}
