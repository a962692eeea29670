using Tunnel2.Protocol.Handshake;

namespace Tunnel2.ProxyEntry.Routing;

/// <summary>
/// Host routing, as ngrok, frp and sish give each tunnel its own host name: <c>{session}.{suffix}</c> and custom
/// domains map to sessions. A request so routed keeps its path (no prefix to strip, nothing to rewrite in its answers)
/// and has an origin of its own in the browser (cookies, storage). Host names compare case-insensitively; the
/// session label is looked up as sent, and browsers send host names in lower case, so sessions meant to be reached by
/// name should have lower-case ids.
/// </summary>
public sealed class HostRouter
{
    private readonly string? _dottedSuffix;
    private readonly Dictionary<string, string> _hosts;

    public HostRouter(RoutingOptions options)
        : this(options.HostSuffix, options.Hosts)
    {
    }

    public HostRouter(string? suffix, IReadOnlyDictionary<string, string> hosts)
    {
        _dottedSuffix = string.IsNullOrEmpty(suffix) ? null : "." + suffix.TrimEnd('.');
        _hosts = new Dictionary<string, string>(hosts, StringComparer.OrdinalIgnoreCase);
        IsEnabled = _dottedSuffix is not null || _hosts.Count > 0;
    }

    /// <summary>False when neither a suffix nor a custom domain is set: every request is path-routed, with no host check.</summary>
    public bool IsEnabled { get; }

    /// <param name="host">The request's <c>Host</c> as sent (<c>HostString.Value</c>), with or without a port.</param>
    public HostRoute Match(string? host, out string session)
    {
        session = string.Empty;
        if (string.IsNullOrEmpty(host) || host[0] == '[')
        {
            return HostRoute.None; // none, or an IPv6 literal: never a session's host
        }

        // Cut the port without a copy, and a fully qualified name's final dot (demo.tunnel.example.com.): the same host.
        int colon = host.IndexOf(':', StringComparison.Ordinal);
        ReadOnlySpan<char> name = (colon < 0 ? host.AsSpan() : host.AsSpan(0, colon)).TrimEnd('.');
        if (name.IsEmpty)
        {
            return HostRoute.None;
        }

        if (_hosts.Count > 0 && _hosts.GetAlternateLookup<ReadOnlySpan<char>>().TryGetValue(name, out string? mapped))
        {
            session = mapped;
            return HostRoute.Session;
        }

        if (_dottedSuffix is null || name.Length <= _dottedSuffix.Length || !name.EndsWith(_dottedSuffix, StringComparison.OrdinalIgnoreCase))
        {
            return HostRoute.None;
        }

        ReadOnlySpan<char> label = name[..^_dottedSuffix.Length];
        if (!HandshakeProtocol.IsValidSessionId(label))
        {
            return HostRoute.NotASession;
        }

        session = label.ToString();
        return HostRoute.Session;
    }

    /// <summary>A DNS host name: dot-separated labels of letters, digits and inner hyphens, 253 characters at most.</summary>
    public static bool IsHostName(string name) =>
        name.Length is > 0 and <= 253 && Uri.CheckHostName(name.TrimEnd('.')) == UriHostNameType.Dns;
}
