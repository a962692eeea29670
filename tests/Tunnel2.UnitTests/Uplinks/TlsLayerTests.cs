using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Tls;
using Tunnel2.TunnelServer.Uplinks;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Uplinks;

/// <summary>The TLS layer alone, over in-memory streams: a plain port passes through, an https port's handshake is done or refused.</summary>
public sealed class TlsLayerTests : IDisposable
{
    private readonly string _folder = Directory.CreateTempSubdirectory("tunnel2-tls-layer-").FullName;

    [Fact]
    public async Task A_plain_tunnel_port_passes_the_connection_on_as_it_is()
    {
        using var probe = new AcceptanceProbe();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        (PipeStream server, _) = PipeStream.CreatePair();
        var connection = new UplinkConnection(socket, server, CancellationToken.None);
        Stream? seen = null;

        await new TlsLayer(Options("http://127.0.0.1:0"), probe.Events).RunAsync(connection, next => Task.FromResult(seen = next.Stream));

        Assert.Same(server, seen);
    }

    [Fact]
    public void An_https_tunnel_port_without_a_certificate_does_not_start()
    {
        using var probe = new AcceptanceProbe();

        Assert.Throws<InvalidOperationException>(() => new TlsLayer(Options("https://127.0.0.1:0"), probe.Events));
    }

    [Fact]
    public async Task An_https_tunnel_port_hands_the_next_layer_the_TLS_stream()
    {
        using var probe = new AcceptanceProbe();
        using ServerCertificate certificate = Certificate();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        (PipeStream server, PipeStream client) = PipeStream.CreatePair();
        var layer = new TlsLayer(Options("https://127.0.0.1:0"), probe.Events, certificate);
        string pin = certificate.Certificate.GetCertHashString(HashAlgorithmName.SHA256);
        await using var tls = new SslStream(client, leaveInnerStreamOpen: true, (_, presented, _, _) =>
            presented is not null && presented.GetCertHashString(HashAlgorithmName.SHA256) == pin); // self-signed: pinned

        Task serving = layer.RunAsync(new UplinkConnection(socket, server, CancellationToken.None), async next =>
        {
            Assert.IsType<SslStream>(next.Stream);
            await next.Stream.WriteAsync(Encoding.ASCII.GetBytes("over tls"));
            await next.Stream.FlushAsync();
        });
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = "server.test" }).WithTimeout();
        byte[] buffer = new byte[16];
        int read = await tls.ReadAsync(buffer).AsTask().WithTimeout();
        await serving.WithTimeout();

        Assert.Equal("over tls", Encoding.ASCII.GetString(buffer, 0, read));
        Assert.Empty(probe.Refused);
    }

    [Fact]
    public async Task A_client_that_speaks_plain_HTTP_to_an_https_port_is_counted_as_a_failed_TLS_handshake_and_goes_no_further()
    {
        using var probe = new AcceptanceProbe();
        using ServerCertificate certificate = Certificate();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        (PipeStream server, PipeStream client) = PipeStream.CreatePair();
        var layer = new TlsLayer(Options("https://127.0.0.1:0"), probe.Events, certificate);
        bool reached = false;

        Task serving = layer.RunAsync(new UplinkConnection(socket, server, CancellationToken.None), _ => Task.FromResult(reached = true));
        await client.WriteAsync(Encoding.ASCII.GetBytes("GET /tunnel2/connect HTTP/1.1\r\nHost: t\r\n\r\n"));
        await client.FlushAsync();
        await serving.WithTimeout();

        Assert.False(reached);
        Assert.Equal(["tls-handshake-failed"], probe.Refused);
    }

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    private static IOptions<TunnelServerOptions> Options(string tunnelUrl) =>
        Microsoft.Extensions.Options.Options.Create(new TunnelServerOptions { Listeners = { TunnelUrl = tunnelUrl }, Limits = { HandshakeTimeout = TestTimeouts.Default } });

    private ServerCertificate Certificate()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=server.test", key, HashAlgorithmName.SHA256);
        using X509Certificate2 certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        string certificatePath = Path.Combine(_folder, "server.crt");
        string keyPath = Path.Combine(_folder, "server.key");
        File.WriteAllText(certificatePath, certificate.ExportCertificatePem());
        File.WriteAllText(keyPath, key.ExportPkcs8PrivateKeyPem());
        return new ServerCertificate(certificatePath, keyPath, NullLogger<ServerCertificate>.Instance);
    }
}
