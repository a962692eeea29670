using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend.Endpoints;

internal static class PingEndpoint
{
    private static readonly byte[] Body = "pong"u8.ToArray();

    public static Task HandleAsync(HttpContext context) =>
        StaticBody.WriteAsync(context.Response, ContentTypes.TextPlain, Body);
}
