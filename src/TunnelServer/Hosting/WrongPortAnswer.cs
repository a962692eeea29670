using System.Buffers;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Hosting;
using Tunnel2.ProxyEntry.Problems;

namespace Tunnel2.TunnelServer.Hosting;

/// <summary>
/// A client dialled the public port (the likeliest first mistake): the uplink path there answers 404 with a problem
/// (<see cref="ProblemTypes.WrongPort"/>) that names the tunnel port, which the client prints before it stops. The
/// body has a Content-Length, since the client reads a refusal's body only so.
/// </summary>
internal static class WrongPortAnswer
{
    public const string Reason = "wrong-port";

    public const string Type = ProblemTypes.WrongPort;

    public static void Map(WebApplication app, ServerEndpoints endpoints) =>
        app.Map(HandshakeProtocol.Path, context => endpoints.IsAdmin(context)
            ? ProblemResponse.WriteAsync(context, StatusCodes.Status404NotFound, ProblemTypes.NotFound, "Not found", "The admin listener has no uplink path.")
            : WriteAsync(context, Detail(context.Request, endpoints)));

    /// <summary>Where the client should point: the host it dialled, at the tunnel port.</summary>
    internal static string Detail(HttpRequest request, ServerEndpoints endpoints)
    {
        int port = endpoints.Tunnel.Port;
        string suggested = $"{(endpoints.TunnelIsHttps ? "https" : "http")}://{request.Host.Host}:{port}";
        return $"Clients connect to the tunnel port {port} (the server's --tunnel-url), not to the public port: use --server {suggested}.";
    }

    private static async Task WriteAsync(HttpContext context, string detail)
    {
        var body = new ArrayBufferWriter<byte>(512);
        ProblemResponse.WriteBody(body, StatusCodes.Status404NotFound, Type, "Wrong port", detail, context.Request.Path.Value, context.TraceIdentifier);
        context.Response.StatusCode = StatusCodes.Status404NotFound;
        context.Response.ContentType = ProblemResponse.ContentType;
        context.Response.ContentLength = body.WrittenCount;
        context.Response.Headers[HandshakeProtocol.ProblemHeader] = Reason; // for a WebSocket client, which sees no body
        await context.Response.Body.WriteAsync(body.WrittenMemory, context.RequestAborted);
    }
}
