using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend.Endpoints;

internal static class HealthEndpoint
{
    private static readonly byte[] Body = "ok"u8.ToArray();

    public static Task HandleAsync(HttpContext context) =>
        StaticBody.WriteAsync(context.Response, ContentTypes.TextPlain, Body);
}
