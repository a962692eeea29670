using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend.Endpoints;

internal static class InfoEndpoint
{
    private static readonly byte[] Body = JsonBody.SerializeOnce(static writer =>
    {
        writer.WriteStartObject();
        writer.WriteString("service", "Tunnel2.TestBackend");
        writer.WriteStartArray("endpoints");
        foreach (var endpoint in EndpointCatalog.All)
        {
            writer.WriteStartObject();
            writer.WriteString("method", endpoint.Method);
            writer.WriteString("path", endpoint.Path);
            writer.WriteString("description", endpoint.Description);
            writer.WriteEndObject();
        }

        writer.WriteEndArray();
        writer.WriteEndObject();
    });

    public static Task HandleAsync(HttpContext context) =>
        StaticBody.WriteAsync(context.Response, ContentTypes.Json, Body);
}
