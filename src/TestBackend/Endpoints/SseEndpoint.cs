using System.Buffers;
using System.Buffers.Text;
using System.Globalization;
using Tunnel2.TestBackend.Diagnostics;
using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend.Endpoints;

/// <summary>
/// <c>GET /loadtest/sse?n=&amp;intervalMs=</c>: a server-sent event stream, the shape of a long-lived response (a
/// dashboard's feed, a long poll). The head and the first event go out at once; <c>n=0</c> streams until the caller leaves.
/// </summary>
internal sealed class SseEndpoint(ILogger<SseEndpoint> logger)
{
    public const int DefaultCount = 10;
    public const int DefaultIntervalMs = 1000;
    public const int MaxIntervalMs = 60_000;

    public async Task HandleAsync(HttpContext context)
    {
        if (!TryReadQuery(context, "n", DefaultCount, int.MaxValue, out int count)
            || !TryReadQuery(context, "intervalMs", DefaultIntervalMs, MaxIntervalMs, out int intervalMs))
        {
            await ProblemDetailsWriter.WriteAsync(context, StatusCodes.Status400BadRequest, "Invalid query",
                $"n must be a whole number from 0 (endless) up, intervalMs one from 0 to {MaxIntervalMs}.");
            return;
        }

        HttpResponse response = context.Response;
        response.ContentType = "text/event-stream";
        response.Headers.CacheControl = "no-cache";
        if (HttpMethods.IsHead(context.Request.Method))
        {
            return;
        }

        CancellationToken aborted = context.RequestAborted;
        int sent = 0;
        try
        {
            while (count == 0 || sent < count)
            {
                if (sent > 0 && intervalMs > 0)
                {
                    await Task.Delay(intervalMs, aborted);
                }

                WriteEvent(response, sent);
                var flush = await response.BodyWriter.FlushAsync(aborted);
                sent++;
                if (flush.IsCompleted || flush.IsCanceled)
                {
                    break;
                }
            }
        }
        catch (Exception ex) when (aborted.IsCancellationRequested && ex is OperationCanceledException or IOException)
        {
            BackendLog.StreamAborted(logger, "sse", sent);
        }
    }

    /// <summary><c>id: i</c> and <c>data: i</c>, then the blank line that ends the event.</summary>
    private static void WriteEvent(HttpResponse response, int id)
    {
        Span<byte> digits = stackalloc byte[11];
        Utf8Formatter.TryFormat(id, digits, out int length);
        var writer = response.BodyWriter;
        writer.Write("id: "u8);
        writer.Write(digits[..length]);
        writer.Write("\ndata: "u8);
        writer.Write(digits[..length]);
        writer.Write("\n\n"u8);
    }

    private static bool TryReadQuery(HttpContext context, string name, int fallback, int max, out int value)
    {
        string? raw = context.Request.Query[name];
        if (raw is null)
        {
            value = fallback;
            return true;
        }

        return int.TryParse(raw, NumberStyles.None, CultureInfo.InvariantCulture, out value) && value <= max;
    }
}
