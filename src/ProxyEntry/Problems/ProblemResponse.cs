using System.Buffers;
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

        WriteBody(response.BodyWriter, status, type, title, detail, context.Request.Path.Value, context.TraceIdentifier);
        await response.BodyWriter.FlushAsync(context.RequestAborted);
    }

    /// <summary>The problem document itself, for answers written without an <see cref="HttpContext"/> (the tunnel port's handshake).</summary>
    public static void WriteBody(IBufferWriter<byte> body, int status, string type, string title, string detail, string? instance, string? traceId = null)
    {
        using var json = new Utf8JsonWriter(body);
        json.WriteStartObject();
        json.WriteString("type", type);
        json.WriteString("title", title);
        json.WriteNumber("status", status);
        json.WriteString("detail", detail);
        json.WriteString("instance", instance);
        if (traceId is not null)
        {
            json.WriteString("traceId", traceId);
        }

        json.WriteEndObject();
    }
}
