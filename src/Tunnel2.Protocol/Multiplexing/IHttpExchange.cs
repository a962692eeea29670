using System.IO.Pipelines;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// One HTTP request/response exchange on an uplink, as the server's forwarder and the client's backend relay see it:
/// the heads, the peer's body in (copied to a writer under the stream's window), and this side's body out. The server
/// opens it with <see cref="Uplink.TryOpenStream"/>; the client gets it from <see cref="IUplinkStreamHandler.OnExchangeOpened"/>.
/// </summary>
public interface IHttpExchange : IStreamHandle
{
    /// <summary>The request the server sent (client side only).</summary>
    RequestHead? RequestHead { get; }

    /// <summary>Whether a body follows the request head (client side only).</summary>
    bool RequestHasBody { get; }

    /// <summary>
    /// Client side, during <see cref="IUplinkStreamHandler.OnExchangeOpened"/> only: the request is whole (no body) and was
    /// the last frame of the reader's batch, so its handler may start it on the reader's thread instead of queuing it.
    /// </summary>
    bool MayStartOnReader { get; }

    /// <summary>Sends the response head (client side). With <paramref name="endStream"/> the response has no body.</summary>
    /// <exception cref="HeadTooLargeException">The head does not fit in one frame.</exception>
    void SendResponseHead(ResponseHead head, bool endStream);

    /// <summary>Waits for the client's response head (server side).</summary>
    Task<ResponseHead> ReadResponseHeadAsync();

    /// <summary>Sends everything <paramref name="source"/> yields as body, then ends the stream's sending side.</summary>
    Task SendBodyAsync(PipeReader source, CancellationToken cancellationToken);

    /// <summary>
    /// Completes once the peer has sent its whole body, or as much of it as the stream's initial window lets it send
    /// before this side reads. Nothing is consumed.
    /// </summary>
    ValueTask WaitForBodyOrFullWindowAsync(CancellationToken cancellationToken);

    /// <summary>
    /// Copies the peer's body into <paramref name="destination"/>, as it is or (with <paramref name="chunked"/>) in
    /// HTTP/1.1 chunked framing. Credit goes back only once the destination has taken the bytes. The destination is
    /// flushed at the end, not completed.
    /// </summary>
    /// <exception cref="StreamResetException">The peer reset the stream mid-body.</exception>
    /// <exception cref="UplinkClosedException">The uplink died mid-body.</exception>
    /// <exception cref="IOException">The destination stopped taking the body.</exception>
    Task CopyInputToAsync(PipeWriter destination, bool chunked, CancellationToken cancellationToken);

    /// <inheritdoc cref="CopyInputToAsync(PipeWriter, bool, CancellationToken)"/>
    /// <param name="destination">Where the body goes.</param>
    /// <param name="chunked">In HTTP/1.1 chunked framing.</param>
    /// <param name="tap">Sees every byte of the body as it is copied, when not null.</param>
    /// <param name="cancellationToken">Ends the copy.</param>
    Task CopyInputToAsync(PipeWriter destination, bool chunked, IBodyTap? tap, CancellationToken cancellationToken);

    /// <inheritdoc cref="CopyInputToAsync(PipeWriter, bool, IBodyTap, CancellationToken)"/>
    /// <param name="destination">Where the body goes.</param>
    /// <param name="chunked">In HTTP/1.1 chunked framing.</param>
    /// <param name="tap">Sees every byte of the body as it is copied, when not null.</param>
    /// <param name="sent">The destination's send progress, when it reports one (the server's public connection on its
    /// loop): credit for bytes flushed at once goes back when they have been sent, not when the flush returned.</param>
    /// <param name="cancellationToken">Ends the copy.</param>
    Task CopyInputToAsync(PipeWriter destination, bool chunked, IBodyTap? tap, ISendProgress? sent, CancellationToken cancellationToken);

    /// <summary>
    /// The same stream as a raw byte stream, once its heads said the connection is upgraded (a 101 answer): the
    /// exchange's owner relays the bytes through it and still disposes the exchange (one object, no allocation).
    /// </summary>
    IByteStream AsByteStream();
}
