using System.Text;
using System.Text.Unicode;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.TunnelClient.Inspection;

/// <summary>Turns kept exchanges into what the API and the HAR export show: redacted headers, bodies as text or base64.</summary>
public static class InspectorViews
{
    public static ExchangeView Of(InspectedExchange exchange, bool revealSecrets)
    {
        var request = new RequestView(exchange.Method, exchange.Target, Headers(exchange.RequestHeaders, revealSecrets),
            Body(exchange.RequestBody, exchange.RequestHeaders));
        ResponseView? response = exchange.Status is { } status
            ? new ResponseView(status, Headers(exchange.ResponseHeaders ?? [], revealSecrets), Body(exchange.ResponseBody, exchange.ResponseHeaders))
            : null;
        return new ExchangeView(exchange.Id, exchange.ReplayOf, exchange.StartedAt, exchange.Wait?.TotalMilliseconds, exchange.Duration.TotalMilliseconds,
            exchange.Backend, OutcomeName(exchange.Outcome), exchange.Error, request, response);
    }

    public static string OutcomeName(InspectionOutcome outcome) => outcome switch
    {
        InspectionOutcome.Completed => "completed",
        InspectionOutcome.Upgraded => "upgraded",
        InspectionOutcome.Failed => "failed",
        _ => "cancelled",
    };

    public static List<HeaderView> Headers(IReadOnlyList<HeaderField> headers, bool revealSecrets)
    {
        var views = new List<HeaderView>(headers.Count);
        foreach (HeaderField header in headers)
        {
            views.Add(new HeaderView(header.Name, InspectorRedaction.Shown(header.Name, header.Value, revealSecrets)));
        }

        return views;
    }

    /// <summary>The first value of the field <paramref name="name"/>, if any.</summary>
    public static string? ValueOf(IReadOnlyList<HeaderField>? headers, string name)
    {
        if (headers is not null)
        {
            foreach (HeaderField header in headers)
            {
                if (header.Name.Equals(name, StringComparison.OrdinalIgnoreCase))
                {
                    return header.Value;
                }
            }
        }

        return null;
    }

    public static BodyView? Body(CapturedBody? body, IReadOnlyList<HeaderField>? headers)
    {
        if (body is null)
        {
            return null;
        }

        string? contentType = ValueOf(headers, "Content-Type");
        string? encoding = ValueOf(headers, "Content-Encoding");
        bool compressed = encoding is not null && !encoding.Equals("identity", StringComparison.OrdinalIgnoreCase);
        bool text = !compressed && IsText(body, contentType);
        return new BodyView(body.Size, body.Bytes.Length, body.Truncated, contentType,
            text ? Encoding.UTF8.GetString(body.Bytes) : null,
            text ? null : Convert.ToBase64String(body.Bytes));
    }

    /// <summary>
    /// Text when valid UTF-8 (a body cut at the limit may end inside a character: up to three bytes are let go); a
    /// text type with stray bytes is shown with replacement characters rather than as base64. A compressed body never is.
    /// </summary>
    private static bool IsText(CapturedBody body, string? contentType)
    {
        if (contentType is not null && IsTextType(contentType))
        {
            return true;
        }

        ReadOnlySpan<byte> bytes = body.Bytes;
        for (int cut = 0; cut <= (body.Truncated ? Math.Min(3, bytes.Length) : 0); cut++)
        {
            if (Utf8.IsValid(bytes[..^cut]))
            {
                return bytes.IndexOf((byte)0) < 0; // NUL bytes mean binary, even when they are valid UTF-8
            }
        }

        return false;
    }

    private static bool IsTextType(string contentType) =>
        contentType.StartsWith("text/", StringComparison.OrdinalIgnoreCase)
        || contentType.Contains("json", StringComparison.OrdinalIgnoreCase)
        || contentType.Contains("xml", StringComparison.OrdinalIgnoreCase)
        || contentType.Contains("javascript", StringComparison.OrdinalIgnoreCase)
        || contentType.StartsWith("application/x-www-form-urlencoded", StringComparison.OrdinalIgnoreCase);
}
