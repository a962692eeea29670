using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.TunnelServer.Edge;

/// <summary>
/// <c>GET /edge/ask?domain={name}</c> on the admin listener: 200 when the edge may get a certificate for the name, 404
/// when not (Caddy looks only at the status; the problem's detail says why, for a person). Behind the admin token when
/// one is set: Caddy's <c>ask</c> URL can carry it as <c>?access_token=…</c>, to which Caddy adds <c>&amp;domain=…</c>.
/// </summary>
public static class CertificateAskEndpoint
{
    public const string Path = "/edge/ask";

    /// <summary>Registers <see cref="CertificateAsk"/> over the host routing settings and the clients' credentials.</summary>
    public static IServiceCollection AddCertificateAsk(this IServiceCollection services, string? sharedToken) =>
        services.AddSingleton(provider =>
        {
            ProxyEntryOptions proxy = provider.GetRequiredService<IOptions<ProxyEntryOptions>>().Value;
            CredentialsFile? file = provider.GetService<CredentialsFile>();
            return new CertificateAsk(proxy.Routing.HostSuffix, SessionEntries.Hosts(proxy.Routing, proxy.Sessions), !string.IsNullOrEmpty(sharedToken),
                () => file?.Current.Clients ?? []);
        });

    /// <summary>What start-up refuses: an ask with no host routing would say no to every name.</summary>
    public static string? Problem(IConfiguration configuration) =>
        string.IsNullOrEmpty(configuration[$"{ProxyEntryOptions.SectionName}:Routing:HostSuffix"])
        && !configuration.GetSection($"{ProxyEntryOptions.SectionName}:Routing:Hosts").GetChildren().Any()
        && !configuration.GetSection($"{ProxyEntryOptions.SectionName}:Sessions").GetChildren().Any(static session => session.GetSection("Hosts").GetChildren().Any())
            ? "TunnelServer:Admin:CertificateAsk needs host routing to say yes to anything: set --host-suffix and/or ProxyEntry:Routing:Hosts:<domain>=<session>."
            : null;

    /// <summary>Maps the endpoint on the admin listener's routes (<see cref="Admin.AdminRoutes"/>: 404 elsewhere, as any path it does not serve).</summary>
    public static void Map(RouteGroupBuilder admin) =>
        admin.MapGet(Path, Ask)
            .WithTags("edge").WithName("CertificateAsk")
            .WithSummary("Caddy's on-demand TLS ask: 200 if the edge may get a certificate for ?domain=, else 404");

    private static Results<ContentHttpResult, ProblemHttpResult> Ask(string? domain, CertificateAsk ask, ILogger<CertificateAsk> logger)
    {
        if (string.IsNullOrEmpty(domain))
        {
            CertificateAskLog.NoDomain(logger);
            return TypedResults.Problem(statusCode: StatusCodes.Status400BadRequest, type: ProblemTypes.EdgeAskNoDomain,
                title: "No domain", detail: $"Ask as GET {Path}?domain=<host name> (Caddy's on_demand_tls ask does).");
        }

        CertificateAskAnswer answer = ask.Decide(domain);
        if (answer is CertificateAskAnswer.CustomDomain or CertificateAskAnswer.SessionHost)
        {
            CertificateAskLog.Yes(logger, domain, answer);
            return TypedResults.Text(answer == CertificateAskAnswer.CustomDomain ? "yes: a custom domain" : "yes: a session host");
        }

        CertificateAskLog.No(logger, domain, answer);
        return TypedResults.Problem(statusCode: StatusCodes.Status404NotFound, type: ProblemTypes.EdgeAskRefused,
            title: "No certificate for this name", detail: $"'{domain}': {Reason(answer)}");
    }

    private static string Reason(CertificateAskAnswer answer) => answer switch
    {
        CertificateAskAnswer.NotAHostName => "not a DNS host name.",
        CertificateAskAnswer.NotASessionName => "under the host suffix, but not a session id.",
        CertificateAskAnswer.NoClientMayServe => "no client of the credentials file may serve this session.",
        _ => "neither a custom domain (ProxyEntry:Routing:Hosts) nor {session}.<ProxyEntry:Routing:HostSuffix>.",
    };
}
