using System.Text.Json;
using Microsoft.AspNetCore.Http;
using Microsoft.Net.Http.Headers;

namespace Tunnel2.ProxyEntry.Problems;

/// <summary>Writes RFC 9457 problem details. Only error paths come here, so a small JSON writer is fine.</summary>
public static class ProblemResponse
{
    public const string ContentType = "application/problem+json";

    public static async Task WriteAsync(HttpContext context, int status, string type, string title, string detail, int? retryAfterSeconds = null)
    {
        HttpResponse response = context.Response;
        response.StatusCode = status;
        response.ContentType = ContentType;
        response.Headers.CacheControl = "no-store";
        if (retryAfterSeconds is { } seconds)
        {
            response.Headers[HeaderNames.RetryAfter] = seconds.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }

        await using (var json = new Utf8JsonWriter(response.BodyWriter))
        {
            json.WriteStartObject();
            json.WriteString("type", type);
            json.WriteString("title", title);
            json.WriteNumber("status", status);
            json.WriteString("detail", detail);
            json.WriteString("instance", context.Request.Path.Value);
            json.WriteString("traceId", context.TraceIdentifier);
            json.WriteEndObject();
        }

        await response.BodyWriter.FlushAsync(context.RequestAborted);
    }
}
