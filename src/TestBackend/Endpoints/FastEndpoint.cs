using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend.Endpoints;

internal static class FastEndpoint
{
    private static readonly byte[] Body = JsonBody.SerializeOnce(static writer =>
    {
        writer.WriteStartObject();
        writer.WriteString("status", "ok");
        writer.WriteString("service", "Tunnel2.TestBackend");
        writer.WriteString("endpoint", "fast");
        writer.WriteString("note", "serialized once at start-up");
        writer.WriteEndObject();
    });

    public static Task HandleAsync(HttpContext context) =>
        StaticBody.WriteAsync(context.Response, ContentTypes.Json, Body);
}
