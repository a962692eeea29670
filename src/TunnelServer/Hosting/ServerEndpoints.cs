using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace Tunnel2.TunnelServer.Hosting;

/// <summary>The listeners of the server (public, tunnel, and the optional h2c and admin ones); after start their endpoints carry the ports actually bound (port 0 in tests).</summary>
public sealed class ServerEndpoints
{
    private IPEndPoint? _tunnel;

    internal ListenOptions? PublicListener { get; set; }

    internal ListenOptions? PublicH2cListener { get; set; }

    internal ListenOptions? AdminListener { get; set; }

    /// <summary>The admin listener's URL (<c>/metrics</c>), when one is configured.</summary>
    public Uri? AdminUrl => AdminListener is { } admin ? new Uri($"http://{admin.IPEndPoint}") : null;

    /// <summary>The admin listener's port once bound, else 0 (no request arrives on port 0).</summary>
    internal int AdminPort => AdminListener?.IPEndPoint?.Port ?? 0;

    /// <summary>Whether a request came in on the admin listener (the one admin-port check: a public request pays one compare).</summary>
    internal bool IsAdmin(HttpContext context) => context.Connection.LocalPort == AdminPort;

    /// <summary>The cleartext HTTP/2 public listener's URL, when one is configured.</summary>
    public Uri? PublicH2cUrl => PublicH2cListener is { } h2c ? new Uri($"http://{h2c.IPEndPoint}") : null;

    public IPEndPoint Public => PublicListener?.IPEndPoint ?? throw new InvalidOperationException("The server has not bound its public listener.");

    /// <summary>The tunnel port's socket (<see cref="Uplinks.UplinkListener"/>), once bound.</summary>
    public IPEndPoint Tunnel
    {
        get => _tunnel ?? throw new InvalidOperationException("The server has not bound its tunnel listener.");
        internal set => _tunnel = value;
    }

    /// <summary>Whether the public listener speaks TLS.</summary>
    public bool PublicIsHttps { get; internal set; }

    /// <summary>Whether the tunnel port speaks TLS.</summary>
    public bool TunnelIsHttps { get; internal set; }

    public Uri PublicUrl => new($"{(PublicIsHttps ? "https" : "http")}://{Public}");

    public Uri TunnelUrl => new($"{(TunnelIsHttps ? "https" : "http")}://{Tunnel}");
}
