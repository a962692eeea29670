using System.Net;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// An edge that terminates TLS in front of a TunnelServer, as Caddy does in tunnel2-deploy/edge: it serves https on
/// 127.0.0.1 with a test certificate and passes each request on over plain HTTP from its own source address
/// (one the server trusts as a proxy), keeping <c>Host</c> and setting <c>X-Forwarded-For</c>
/// to the caller and <c>X-Forwarded-Proto: https</c>. Enough of a proxy for a login: bodies are read whole.
/// </summary>
public sealed class TlsEdge : IAsyncDisposable
{
    private static readonly HashSet<string> NotPassed = new(StringComparer.OrdinalIgnoreCase)
    {
        "Host", "Connection", "Transfer-Encoding", "Keep-Alive", "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host",
    };

    private readonly WebApplication _app;
    private readonly HttpClient _upstream;

    private TlsEdge(WebApplication app, HttpClient upstream, Uri url)
    {
        _app = app;
        _upstream = upstream;
        Url = url;
    }

    /// <summary>The edge's https URL (<c>https://127.0.0.1:port/</c>).</summary>
    public Uri Url { get; }

    public static async Task<TlsEdge> StartAsync(Uri server, IPAddress from, TestCertificates.PemPair certificate)
    {
        HttpClient upstream = CallerHttp.From(from);
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        using var pem = X509Certificate2.CreateFromPemFile(certificate.CertificatePath, certificate.KeyPath);
        X509Certificate2 served = X509CertificateLoader.LoadPkcs12(pem.Export(X509ContentType.Pkcs12), null);
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, 0, listen => listen.UseHttps(served)));
        WebApplication app = builder.Build();
        app.Run(context => PassAsync(context, upstream, server));
        await app.StartAsync();
        var url = new Uri(app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First());
        return new TlsEdge(app, upstream, url);
    }

    public async ValueTask DisposeAsync()
    {
        await _app.DisposeAsync();
        _upstream.Dispose();
    }

    private static async Task PassAsync(HttpContext context, HttpClient upstream, Uri server)
    {
        HttpRequest request = context.Request;
        using var forward = new HttpRequestMessage(new HttpMethod(request.Method), new Uri(server, request.Path + request.QueryString));
        if (request.ContentLength > 0 || request.Headers.TransferEncoding.Count > 0)
        {
            var body = new MemoryStream();
            await request.Body.CopyToAsync(body);
            forward.Content = new ByteArrayContent(body.ToArray());
        }

        foreach ((string name, Microsoft.Extensions.Primitives.StringValues values) in request.Headers)
        {
            if (!NotPassed.Contains(name) && !forward.Headers.TryAddWithoutValidation(name, (IEnumerable<string?>)values))
            {
                forward.Content?.Headers.TryAddWithoutValidation(name, (IEnumerable<string?>)values);
            }
        }

        forward.Headers.Host = request.Host.Value;
        forward.Headers.TryAddWithoutValidation("X-Forwarded-For", context.Connection.RemoteIpAddress?.ToString());
        forward.Headers.TryAddWithoutValidation("X-Forwarded-Proto", "https");
        using HttpResponseMessage answer = await upstream.SendAsync(forward, HttpCompletionOption.ResponseHeadersRead, context.RequestAborted);
        context.Response.StatusCode = (int)answer.StatusCode;
        foreach ((string name, IEnumerable<string> values) in answer.Headers.Concat(answer.Content.Headers))
        {
            if (!NotPassed.Contains(name))
            {
                context.Response.Headers.Append(name, values.ToArray());
            }
        }

        await answer.Content.CopyToAsync(context.Response.Body, context.RequestAborted);
    }
}
