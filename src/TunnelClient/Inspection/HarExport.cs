using System.Reflection;
using Microsoft.AspNetCore.WebUtilities;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.TunnelClient.Inspection;

/// <summary>
/// The kept exchanges as an HTTP Archive (<c>GET /api/requests.har</c>), oldest first as browsers write them. A URL is
/// the backend's origin and the target it was sent, since that is what the request asked of the backend; secrets are
/// redacted as on the page. A body cut at the limit says so in a comment; an exchange without a response has status 0.
/// </summary>
public static class HarExport
{
    private static readonly string Version =
        typeof(HarExport).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion ?? "unknown";

    public static HarDocument Of(IReadOnlyList<InspectedExchange> newestFirst, bool revealSecrets)
    {
        var entries = new List<HarEntry>(newestFirst.Count);
        for (int i = newestFirst.Count - 1; i >= 0; i--)
        {
            entries.Add(Entry(newestFirst[i], revealSecrets));
        }

        return new HarDocument(new HarLog("1.2", new HarCreator("Tunnel2 TunnelClient", Version), entries));
    }

    private static HarEntry Entry(InspectedExchange exchange, bool revealSecrets)
    {
        double total = exchange.Duration.TotalMilliseconds;
        double wait = exchange.Wait?.TotalMilliseconds ?? total;
        string url = (exchange.Backend ?? "http://backend") + exchange.Target;
        var request = new HarRequest(exchange.Method, url, "HTTP/1.1", [], NameValues(exchange.RequestHeaders, revealSecrets), QueryOf(exchange.Target),
            PostData(exchange), -1, exchange.RequestBody?.Size ?? 0);
        string? comment = exchange.ReplayOf is { } original ? $"replay of request {original}" : null;
        if (exchange.Error is not null)
        {
            comment = comment is null ? exchange.Error : $"{comment}; {exchange.Error}";
        }

        return new HarEntry(exchange.StartedAt, total, request, Response(exchange, revealSecrets), new HarCache(),
            new HarTimings(0, wait, Math.Max(0, total - wait)), null, comment);
    }

    private static HarResponse Response(InspectedExchange exchange, bool revealSecrets)
    {
        if (exchange.Status is not { } status)
        {
            return new HarResponse(0, "", "HTTP/1.1", [], [], new HarContent(0, "x-unknown", null, null, null), "", -1, -1);
        }

        IReadOnlyList<HeaderField> headers = exchange.ResponseHeaders ?? [];
        BodyView? body = InspectorViews.Body(exchange.ResponseBody, headers);
        string mimeType = InspectorViews.ValueOf(headers, "Content-Type") ?? "x-unknown";
        HarContent content = body is null
            ? new HarContent(0, mimeType, null, null, null)
            : new HarContent(body.Size, mimeType, body.Text ?? body.Base64, body.Text is null ? "base64" : null, TruncationNote(body));
        return new HarResponse(status, ReasonPhrases.GetReasonPhrase(status), "HTTP/1.1", [], NameValues(headers, revealSecrets), content,
            InspectorViews.ValueOf(headers, "Location") ?? "", -1, body?.Size ?? 0);
    }

    /// <summary>HAR's postData has text only: a binary request body is left out, with a comment saying so.</summary>
    private static HarPostData? PostData(InspectedExchange exchange)
    {
        if (InspectorViews.Body(exchange.RequestBody, exchange.RequestHeaders) is not { } body)
        {
            return null;
        }

        string mimeType = body.ContentType ?? "application/octet-stream";
        return body.Text is null
            ? new HarPostData(mimeType, "", $"binary body of {body.Size} bytes, not included")
            : new HarPostData(mimeType, body.Text, TruncationNote(body));
    }

    private static string? TruncationNote(BodyView body) => body.Truncated ? $"first {body.Captured} of {body.Size} bytes" : null;

    private static List<HarNameValue> NameValues(IReadOnlyList<HeaderField> headers, bool revealSecrets)
    {
        var values = new List<HarNameValue>(headers.Count);
        foreach (HeaderField header in headers)
        {
            values.Add(new HarNameValue(header.Name, InspectorRedaction.Shown(header.Name, header.Value, revealSecrets)));
        }

        return values;
    }

    private static List<HarNameValue> QueryOf(string target)
    {
        int question = target.IndexOf('?', StringComparison.Ordinal);
        var values = new List<HarNameValue>();
        if (question < 0)
        {
            return values;
        }

        foreach (KeyValuePair<string, Microsoft.Extensions.Primitives.StringValues> pair in QueryHelpers.ParseQuery(target[question..]))
        {
            foreach (string? value in pair.Value)
            {
                values.Add(new HarNameValue(pair.Key, value ?? ""));
            }
        }

        return values;
    }
}
