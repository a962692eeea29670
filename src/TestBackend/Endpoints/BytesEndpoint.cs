using Tunnel2.TestBackend.Diagnostics;
using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend.Endpoints;

/// <summary><c>GET /loadtest/bytes/{n}</c>: a download of any size in constant memory.</summary>
internal sealed class BytesEndpoint(ILogger<BytesEndpoint> logger)
{
    public const long MaxBytes = 16L * 1024 * 1024 * 1024;

    public async Task HandleAsync(HttpContext context)
    {
        if (!RouteNumbers.TryGetInt64(context, "n", out var count, out var raw))
        {
            await ProblemDetailsWriter.WriteAsync(context, StatusCodes.Status400BadRequest, "Invalid byte count",
                $"'{raw}' is not a whole number of bytes; use 0 to {MaxBytes} (16 GiB).");
            return;
        }

        if (count is < 0 or > MaxBytes)
        {
            await ProblemDetailsWriter.WriteAsync(context, StatusCodes.Status400BadRequest, "Invalid byte count",
                $"{count} bytes is out of range; use 0 to {MaxBytes} (16 GiB).");
            return;
        }

        var response = context.Response;
        response.ContentType = ContentTypes.OctetStream;
        response.ContentLength = count;
        if (HttpMethods.IsHead(context.Request.Method))
        {
            return; // the head says how much a GET would get; Kestrel would only discard the bytes
        }

        var writer = response.BodyWriter;
        var aborted = context.RequestAborted;
        var block = BytePattern.Block;
        long sent = 0;
        try
        {
            while (sent < count)
            {
                var chunk = (int)Math.Min(block.Length, count - sent);

                // WriteAsync flushes, so a slow reader makes this await: memory stays at one pipe's worth.
                var result = await writer.WriteAsync(block[..chunk], aborted);
                sent += chunk;
                if (result.IsCompleted || result.IsCanceled)
                {
                    break;
                }
            }
        }
        catch (OperationCanceledException) when (aborted.IsCancellationRequested)
        {
        }

        if (sent < count)
        {
            BackendLog.StreamAborted(logger, "bytes", sent);
        }
    }
}
