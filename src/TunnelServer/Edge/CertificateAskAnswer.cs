namespace Tunnel2.TunnelServer.Edge;

/// <summary>What <see cref="CertificateAsk.Decide"/> said about a host name, and why.</summary>
public enum CertificateAskAnswer
{
    /// <summary>Yes: a custom domain of <c>ProxyEntry:Routing:Hosts</c>.</summary>
    CustomDomain,

    /// <summary>Yes: <c>{session}.{HostSuffix}</c>, and some client may serve that session.</summary>
    SessionHost,

    /// <summary>No: missing, or not a DNS host name (an address, a port, characters no certificate can name).</summary>
    NotAHostName,

    /// <summary>No: neither a custom domain nor under the host suffix.</summary>
    NotRouted,

    /// <summary>No: under the host suffix, but what stands before it cannot be a session id.</summary>
    NotASessionName,

    /// <summary>No: a session name under the suffix, but no client of the credentials file may serve it.</summary>
    NoClientMayServe,
}
