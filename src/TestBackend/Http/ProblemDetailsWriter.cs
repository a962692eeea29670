using Microsoft.AspNetCore.WebUtilities;

namespace Tunnel2.TestBackend.Http;

/// <summary>Writes RFC 9457 problem details (type, title, status, detail, instance) without a serializer.</summary>
internal static class ProblemDetailsWriter
{
    public static Task WriteAsync(HttpContext context, int status, string detail) =>
        WriteAsync(context, status, ReasonPhrases.GetReasonPhrase(status), detail);

    public static Task WriteAsync(HttpContext context, int status, string title, string detail)
    {
        context.Response.StatusCode = status;
        var state = (Type: TypeFor(status), Title: title, Status: status, Detail: detail, Instance: context.Request.Path.Value);
        return JsonBody.WriteAsync(context.Response, ContentTypes.ProblemJson, state, static (writer, s) =>
        {
            writer.WriteStartObject();
            writer.WriteString("type", s.Type);
            writer.WriteString("title", s.Title);
            writer.WriteNumber("status", s.Status);
            writer.WriteString("detail", s.Detail);
            if (!string.IsNullOrEmpty(s.Instance))
            {
                writer.WriteString("instance", s.Instance);
            }

            writer.WriteEndObject();
        });
    }

    // The RFC 9110 sections ASP.NET Core itself uses; "about:blank" (RFC 9457 §4.2.1) for the rest.
    private static string TypeFor(int status) => status switch
    {
        400 => "https://tools.ietf.org/html/rfc9110#section-15.5.1",
        404 => "https://tools.ietf.org/html/rfc9110#section-15.5.5",
        405 => "https://tools.ietf.org/html/rfc9110#section-15.5.6",
        413 => "https://tools.ietf.org/html/rfc9110#section-15.5.14",
        500 => "https://tools.ietf.org/html/rfc9110#section-15.6.1",
        _ => "about:blank",
    };
}
