using System.Buffers;
using Microsoft.AspNetCore.Http.Features;
using Tunnel2.TestBackend.Diagnostics;

namespace Tunnel2.TestBackend.Endpoints;

/// <summary>
/// <c>POST /loadtest/echo</c>: the request body streamed back chunk by chunk. Never more than what the
/// request pipe holds (Kestrel's MaxRequestBufferSize) is in memory, whatever the body's size.
/// </summary>
internal sealed class EchoEndpoint(ILogger<EchoEndpoint> logger)
{
    public async Task HandleAsync(HttpContext context)
    {
        var sizeLimit = context.Features.Get<IHttpMaxRequestBodySizeFeature>();
        if (sizeLimit is { IsReadOnly: false })
        {
            sizeLimit.MaxRequestBodySize = null;
        }

        var request = context.Request;
        var response = context.Response;
        if (request.ContentType is { } contentType)
        {
            response.ContentType = contentType;
        }

        if (request.ContentLength is { } contentLength)
        {
            response.ContentLength = contentLength;
        }

        var reader = request.BodyReader;
        var writer = response.BodyWriter;
        var aborted = context.RequestAborted;
        long copied = 0;
        try
        {
            while (true)
            {
                var read = await reader.ReadAsync(aborted);
                var buffer = read.Buffer;
                foreach (var segment in buffer)
                {
                    writer.Write(segment.Span);
                }

                // Measured before AdvanceTo, never after: AdvanceTo returns the consumed segments to the pipe's pool and
                // resets them, and a sequence over reset segments reports a wrong length. When the request's head and a
                // body of a multiple of 4 KiB arrived in one read, it reported 0, the flush was skipped and the answer
                // stayed in Kestrel's output pipe until more body came (docs/test-backend.md, "Nothing read after
                // AdvanceTo").
                long length = buffer.Length;
                copied += length;
                reader.AdvanceTo(buffer.End);

                if (length > 0)
                {
                    var flush = await writer.FlushAsync(aborted);
                    if (flush.IsCompleted || flush.IsCanceled)
                    {
                        BackendLog.StreamAborted(logger, "echo", copied);
                        return;
                    }
                }

                if (read.IsCompleted || read.IsCanceled)
                {
                    // Once more, with nothing new written: under CPU pressure Kestrel's last flush of a response was seen to
                    // leave its final bytes unflushed in the connection's output pipe, and the caller waited for them for
                    // good (docs/test-backend.md, "One more flush at the end"). A flush with nothing pending costs nothing.
                    await writer.FlushAsync(aborted);
                    return;
                }
            }
        }
        catch (Exception ex) when (aborted.IsCancellationRequested && ex is OperationCanceledException or IOException)
        {
            BackendLog.StreamAborted(logger, "echo", copied);
        }
    }
}
