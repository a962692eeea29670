using System.Buffers;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.TunnelClient.Relay.Shaping;

/// <summary>
/// Which <c>Host</c> the backend is sent (<c>--host-header</c>, named after ngrok's): <c>preserve</c>, the caller's, as
/// ngrok, frp and cloudflared pass it by default, so that an app which compares <c>Origin</c> or <c>Referer</c> with
/// <c>Host</c> (Jupyter, Grafana, Django's CSRF check) sees a same-origin request; <c>rewrite</c>, the backend's own
/// <c>host:port</c>, for a backend with named virtual hosts or a dev server that wants its own name; or a fixed value.
/// The caller's Host is the one ProxyEntry put in <c>X-Forwarded-Host</c> (it replaces any the caller sent), which
/// every server version sends; without it (an HTTP/1.0 caller that sent no Host) the backend gets its own.
/// </summary>
public sealed class HostHeaderPolicy
{
    public const string Preserve = "preserve";
    public const string Rewrite = "rewrite";

    private const string ForwardedHost = "X-Forwarded-Host";

    private static readonly SearchValues<char> NotInAuthority = SearchValues.Create(" \t/?#@\\");

    private readonly bool _preserve;

    private HostHeaderPolicy(bool preserve, string? fixedHost)
    {
        _preserve = preserve;
        FixedHost = fixedHost;
    }

    /// <summary>The fixed value the backend is always sent, or null when it depends on the request or the backend.</summary>
    public string? FixedHost { get; }

    /// <summary>Whether the caller's Host is passed on (the default).</summary>
    public bool PreservesCallerHost => _preserve;

    /// <summary>Reads <c>preserve</c>, <c>rewrite</c> (either case) or a <c>host[:port]</c>.</summary>
    /// <param name="error">Why <paramref name="value"/> is none of those.</param>
    public static HostHeaderPolicy? Parse(string? value, out string? error)
    {
        error = null;
        string text = (value ?? Preserve).Trim();
        if (text.Equals(Preserve, StringComparison.OrdinalIgnoreCase))
        {
            return new HostHeaderPolicy(preserve: true, fixedHost: null);
        }

        if (text.Equals(Rewrite, StringComparison.OrdinalIgnoreCase))
        {
            return new HostHeaderPolicy(preserve: false, fixedHost: null);
        }

        if (IsAuthority(text))
        {
            return new HostHeaderPolicy(preserve: false, fixedHost: text);
        }

        error = $"'{value}' is neither preserve, rewrite nor a host name with an optional port (app.internal, app.internal:8080)";
        return null;
    }

    /// <summary>The Host for <paramref name="request"/> on a backend whose own authority is <paramref name="backendHost"/>.</summary>
    public string For(List<HeaderField> request, string backendHost)
    {
        if (FixedHost is { } fixedHost)
        {
            return fixedHost;
        }

        if (_preserve)
        {
            foreach (HeaderField field in request)
            {
                if (field.Name.Equals(ForwardedHost, StringComparison.OrdinalIgnoreCase) && field.Value.Length > 0)
                {
                    return field.Value;
                }
            }
        }

        return backendHost;
    }

    /// <summary>A host name or address with an optional port, and nothing else a URL's authority may hold.</summary>
    private static bool IsAuthority(string text) =>
        text.Length is > 0 and <= 255
        && HttpSyntax.IsSafeFieldValue(text)
        && !text.AsSpan().ContainsAny(NotInAuthority)
        && Uri.TryCreate("http://" + text + "/", UriKind.Absolute, out Uri? url)
        && url.HostNameType != UriHostNameType.Unknown
        && url.PathAndQuery == "/";
}
