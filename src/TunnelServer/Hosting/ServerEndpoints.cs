using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace Tunnel2.TunnelServer.Hosting;

/// <summary>The two listeners of the server; after start their endpoints carry the ports actually bound (port 0 in tests).</summary>
public sealed class ServerEndpoints
{
    private IPEndPoint? _tunnel;

    internal ListenOptions? PublicListener { get; set; }

    public IPEndPoint Public => PublicListener?.IPEndPoint ?? throw new InvalidOperationException("The server has not bound its public listener.");

    /// <summary>The tunnel port's socket (<see cref="Uplinks.UplinkListener"/>), once bound.</summary>
    public IPEndPoint Tunnel
    {
        get => _tunnel ?? throw new InvalidOperationException("The server has not bound its tunnel listener.");
        internal set => _tunnel = value;
    }

    public Uri PublicUrl => new($"http://{Public}");

    public Uri TunnelUrl => new($"http://{Tunnel}");
}
