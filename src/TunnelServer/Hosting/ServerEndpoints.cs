using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace Tunnel2.TunnelServer.Hosting;

/// <summary>The two listeners of the server; after start their endpoints carry the ports actually bound (port 0 in tests).</summary>
public sealed class ServerEndpoints
{
    internal ListenOptions? PublicListener { get; set; }

    internal ListenOptions? TunnelListener { get; set; }

    public IPEndPoint Public => PublicListener?.IPEndPoint ?? throw new InvalidOperationException("The server has not bound its public listener.");

    public IPEndPoint Tunnel => TunnelListener?.IPEndPoint ?? throw new InvalidOperationException("The server has not bound its tunnel listener.");

    public Uri PublicUrl => new($"http://{Public}");

    public Uri TunnelUrl => new($"http://{Tunnel}");
}
