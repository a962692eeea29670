using Tunnel2.ProxyEntry.Routing;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.TunnelServer.Edge;

/// <summary>
/// Whether an edge that issues certificates on demand (Caddy's <c>on_demand_tls</c>) may get one for a host name: yes
/// for a custom domain of <c>ProxyEntry:Routing:Hosts</c>, and for <c>{session}.{HostSuffix}</c> when some client may serve
/// that session (the single <c>--token</c> may serve any; a credentials file's clients only their <c>Sessions</c>
/// patterns). Everything else is no, so nobody can make the edge order certificates for names this server never
/// routes. The name is parsed by the same <see cref="HostRouter"/> that routes requests, so ask and routing agree.
/// </summary>
public sealed class CertificateAsk
{
    private readonly HostRouter _suffix;
    private readonly Dictionary<string, string> _hosts;
    private readonly bool _sharedToken;
    private readonly Func<IReadOnlyList<ClientCredential>> _clients;

    /// <param name="clients">The credentials file's clients as they are now (read on every ask: the file reloads).</param>
    public CertificateAsk(string? hostSuffix, IReadOnlyDictionary<string, string> hosts, bool sharedToken, Func<IReadOnlyList<ClientCredential>> clients)
    {
        _suffix = new HostRouter(hostSuffix, new Dictionary<string, string>());
        _hosts = new Dictionary<string, string>(hosts, StringComparer.OrdinalIgnoreCase);
        _sharedToken = sharedToken;
        _clients = clients;
    }

    public CertificateAskAnswer Decide(string? domain)
    {
        if (string.IsNullOrEmpty(domain) || !HostRouter.IsHostName(domain) || !IsCertificateName(domain))
        {
            return CertificateAskAnswer.NotAHostName;
        }

        string name = domain.TrimEnd('.');
        if (_hosts.ContainsKey(name))
        {
            return CertificateAskAnswer.CustomDomain;
        }

        return _suffix.Match(name, out string session) switch
        {
            HostRoute.Session => MayBeServed(session) ? CertificateAskAnswer.SessionHost : CertificateAskAnswer.NoClientMayServe,
            HostRoute.NotASession => CertificateAskAnswer.NotASessionName,
            _ => CertificateAskAnswer.NotRouted,
        };
    }

    /// <summary>Letters, digits, hyphens and dots only: a session id may hold <c>_</c> or <c>~</c>, which no public CA puts in a certificate.</summary>
    private static bool IsCertificateName(string domain)
    {
        foreach (char c in domain)
        {
            if (!char.IsAsciiLetterOrDigit(c) && c is not ('-' or '.'))
            {
                return false;
            }
        }

        return true;
    }

    private bool MayBeServed(string session)
    {
        if (_sharedToken)
        {
            return true; // the single --token may serve any session, so any well-formed name under the suffix is one
        }

        foreach (ClientCredential client in _clients())
        {
            if (client.MayServe(session))
            {
                return true;
            }
        }

        return false;
    }
}
