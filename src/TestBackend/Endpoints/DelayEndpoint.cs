using System.Buffers;
using System.Buffers.Text;
using Tunnel2.TestBackend.Diagnostics;
using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend.Endpoints;

/// <summary><c>GET /loadtest/delay/{ms}</c>: a slow backend whose wait ends as soon as the caller goes away.</summary>
internal sealed class DelayEndpoint(DelayStatistics statistics, ILogger<DelayEndpoint> logger)
{
    public const long MaxDelayMs = 60_000;

    public async Task HandleAsync(HttpContext context)
    {
        if (!RouteNumbers.TryGetInt64(context, "ms", out var delayMs, out var raw))
        {
            await ProblemDetailsWriter.WriteAsync(context, StatusCodes.Status400BadRequest, "Invalid delay",
                $"'{raw}' is not a whole number of milliseconds; use 0 to {MaxDelayMs}.");
            return;
        }

        if (delayMs is < 0 or > MaxDelayMs)
        {
            await ProblemDetailsWriter.WriteAsync(context, StatusCodes.Status400BadRequest, "Invalid delay",
                $"A delay of {delayMs} ms is out of range; use 0 to {MaxDelayMs}.");
            return;
        }

        var aborted = context.RequestAborted;
        statistics.WaitStarted();
        try
        {
            await Task.Delay(TimeSpan.FromMilliseconds(delayMs), aborted);
        }
        catch (OperationCanceledException) when (aborted.IsCancellationRequested)
        {
            statistics.WaitCancelled();
            BackendLog.DelayCancelled(logger, delayMs);
            return;
        }

        statistics.WaitCompleted();
        await WriteBody(context.Response, delayMs);
    }

    private static Task WriteBody(HttpResponse response, long delayMs)
    {
        ReadOnlySpan<byte> prefix = "{\"delayMs\":"u8;
        Span<byte> body = stackalloc byte[prefix.Length + 21];
        prefix.CopyTo(body);
        Utf8Formatter.TryFormat(delayMs, body[prefix.Length..], out var digits);
        var length = prefix.Length + digits;
        body[length++] = (byte)'}';

        response.ContentType = ContentTypes.Json;
        response.ContentLength = length;
        response.BodyWriter.Write(body[..length]);
        return JsonBody.AsTask(response.BodyWriter.FlushAsync(response.HttpContext.RequestAborted));
    }
}
