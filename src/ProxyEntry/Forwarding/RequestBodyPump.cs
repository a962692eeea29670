using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Problems;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// The caller's body, pumped up the stream while the response head is awaited. Its result is what the caller is told
/// when its own body failed (too slow, badly framed); null otherwise.
/// </summary>
internal sealed class RequestBodyPump
{
    /// <summary>The pump of a request without a body: nothing failed.</summary>
    public static readonly Task<ForwardingFailure?> None = Task.FromResult<ForwardingFailure?>(null);

    private readonly long? _maxRequestBodySize;
    private readonly HeldBackUploads _heldBack;
    private readonly ILogger<RequestBodyPump> _logger;

    public RequestBodyPump(IOptions<ProxyEntryOptions> options, HeldBackUploads heldBack, ILogger<RequestBodyPump> logger)
    {
        _maxRequestBodySize = options.Value.Limits.MaxRequestBodySize;
        _heldBack = heldBack;
        _logger = logger;
    }

    public static bool RequestHasBody(HttpContext context) =>
        context.Features.Get<IHttpRequestBodyDetectionFeature>()?.CanHaveBody ?? context.Request.ContentLength > 0;

    public async Task<ForwardingFailure?> SendAsync(HttpContext context, IHttpExchange stream)
    {
        if (context.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } limit)
        {
            limit.MaxRequestBodySize = _maxRequestBodySize;
        }

        try
        {
            using HeldBackUploads.Watch watch = _heldBack.Start(stream, context);
            await stream.SendBodyAsync(context.Request.BodyReader, context.RequestAborted);
        }
        catch (Exception ex) when (ex is ConnectionResetException or ConnectionAbortedException
                                   || (ex is OperationCanceledException && context.RequestAborted.IsCancellationRequested))
        {
            // Reset by the caller, or its connection aborted (HeldBackUploads found it reset): gone either way.
            return CallerLeft(context, stream);
        }
        catch (BadHttpRequestException ex) when (ex.StatusCode == StatusCodes.Status413PayloadTooLarge)
        {
            stream.Reset(ProtocolErrorCode.RequestBodyTooLarge);
        }
        catch (BadHttpRequestException ex)
        {
            // Kestrel refused the caller's body: below the minimum data rate (408) or badly framed (400).
            stream.Reset(ProtocolErrorCode.Cancelled);
            return ex.StatusCode == StatusCodes.Status408RequestTimeout ? ForwardingFailure.RequestBodyTooSlow : ForwardingFailure.InvalidRequestBody;
        }
        catch (IOException ex) when (ex.InnerException is OverflowException)
        {
            // Kestrel reports a chunk size too large for its arithmetic as a plain IOException ("Bad chunk size data"),
            // not as a BadHttpRequestException: the caller's framing all the same, a 400 and not the backend's 502.
            stream.Reset(ProtocolErrorCode.Cancelled);
            return ForwardingFailure.InvalidRequestBody;
        }
        catch (Exception ex) when (ex is IOException or OperationCanceledException or InvalidOperationException)
        {
            // The caller stopped sending, or the stream failed first: either way nothing more goes up this stream.
            if (stream.IsAborted)
            {
                ProxyEntryLog.RequestBodyStoppedByStream(_logger, stream.Id, ex.GetType().Name, ex.Message);
            }
            else
            {
                ProxyEntryLog.RequestBodyStopped(_logger, stream.Id, ex.GetType().Name, ex.Message);
            }

            stream.Reset(ProtocolErrorCode.Cancelled);
        }

        return null;
    }

    /// <summary>
    /// The caller's connection failed under its body: the stream is reset so the client cuts the backend's request, and
    /// the connection aborted, so Kestrel neither answers it nor tries to drain a body that will never come.
    /// </summary>
    private static ForwardingFailure CallerLeft(HttpContext context, IHttpExchange stream)
    {
        stream.Reset(ProtocolErrorCode.Cancelled);
        context.Abort();
        return ForwardingFailure.CallerGone;
    }

    /// <summary>Once the exchange is over, an unfinished upload is cut short rather than waited for.</summary>
    public static async Task<ForwardingFailure?> StopAsync(HttpContext context, Task<ForwardingFailure?> requestBody)
    {
        if (!requestBody.IsCompleted)
        {
            context.Request.BodyReader.CancelPendingRead();
        }

        return await requestBody;
    }
}
