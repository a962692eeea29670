using System.Text.Json;
using Microsoft.AspNetCore.Http.Features;
using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend.Endpoints;

/// <summary><c>GET /loadtest/get</c>: the request described the way httpbin's /get does.</summary>
internal static class RequestDescriptionEndpoint
{
    public static Task HandleAsync(HttpContext context) =>
        JsonBody.WriteAsync(context.Response, ContentTypes.Json, context, static (writer, ctx) => Describe(writer, ctx));

    private static void Describe(Utf8JsonWriter writer, HttpContext context)
    {
        var request = context.Request;
        writer.WriteStartObject();
        writer.WriteString("method", request.Method);
        WriteUrl(writer, context);

        // Multi-valued arguments become arrays, as httpbin does.
        writer.WriteStartObject("args");
        foreach (var (name, values) in request.Query)
        {
            if (values.Count == 1)
            {
                writer.WriteString(name, values[0]);
                continue;
            }

            writer.WriteStartArray(name);
            foreach (var value in values)
            {
                writer.WriteStringValue(value);
            }

            writer.WriteEndArray();
        }

        writer.WriteEndObject();

        // Repeated headers are joined with ", " (RFC 9110 §5.3), as httpbin does.
        writer.WriteStartObject("headers");
        foreach (var (name, values) in request.Headers)
        {
            writer.WritePropertyName(name);
            if (values.Count == 1)
            {
                writer.WriteStringValue(values[0]);
                continue;
            }

            for (var i = 0; i < values.Count; i++)
            {
                if (i > 0)
                {
                    writer.WriteStringValueSegment(", ", isFinalSegment: false);
                }

                writer.WriteStringValueSegment(values[i], isFinalSegment: i == values.Count - 1);
            }

            if (values.Count == 0)
            {
                writer.WriteStringValue(string.Empty);
            }
        }

        writer.WriteEndObject();
        WriteOrigin(writer, context);
        writer.WriteEndObject();
    }

    /// <summary>
    /// The URL as received: scheme and Host header plus the raw request target, so a test can see
    /// exactly what path and query a proxy forwarded (no decoding, no normalisation).
    /// </summary>
    private static void WriteUrl(Utf8JsonWriter writer, HttpContext context)
    {
        var request = context.Request;
        var target = context.Features.Get<IHttpRequestFeature>()?.RawTarget;
        if (string.IsNullOrEmpty(target))
        {
            target = request.PathBase.Value + request.Path.Value + request.QueryString.Value;
        }

        writer.WritePropertyName("url");
        if (!target.StartsWith('/'))
        {
            // Absolute-form or asterisk-form target: already a complete value.
            writer.WriteStringValue(target);
            return;
        }

        writer.WriteStringValueSegment(request.Scheme, isFinalSegment: false);
        writer.WriteStringValueSegment("://", isFinalSegment: false);
        writer.WriteStringValueSegment(request.Host.Value ?? string.Empty, isFinalSegment: false);
        writer.WriteStringValueSegment(target, isFinalSegment: true);
    }

    private static void WriteOrigin(Utf8JsonWriter writer, HttpContext context)
    {
        var address = context.Connection.RemoteIpAddress;
        if (address is null)
        {
            writer.WriteNull("origin");
            return;
        }

        if (address.IsIPv4MappedToIPv6)
        {
            address = address.MapToIPv4();
        }

        Span<char> text = stackalloc char[64];
        if (address.TryFormat(text, out var length))
        {
            writer.WriteString("origin", text[..length]);
        }
        else
        {
            writer.WriteString("origin", address.ToString());
        }
    }
}
