using System.Net.Sockets;
using Tunnel2.Protocol.Tcp;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// A raw byte stream on an uplink, both ways, as the TCP relays and the upgraded (WebSocket) relays see it. Waiting
/// owners copy with the async loops; an owner on an event loop, which can neither wait on tasks nor read a pipe, takes
/// the peer's bytes through an <see cref="IStreamInboundSink"/> fed from the reader's buffer and sends pooled buffers
/// under credit taken without waiting.
/// </summary>
public interface IByteStream : IStreamHandle
{
    /// <summary>
    /// What a read that may wait for its source asks for: what a quiet direction holds while it waits. A read that
    /// fills its buffer is followed by one as large as credit and <see cref="UplinkSettings.DataChunkSize"/> allow.
    /// </summary>
    const int WaitingReadSize = 16 * 1024;

    /// <summary>A raw TCP stream (version 5): who connected to the session's TCP port. Null for an upgraded exchange.</summary>
    TcpStreamOpen? Tcp { get; }

    /// <summary>This side's END_STREAM went out: its sending half ended cleanly, not with a reset.</summary>
    bool HasSentEnd { get; }

    /// <summary>
    /// Sends everything <paramref name="source"/> yields as Data frames, each read straight into the frame's buffer under
    /// credit in hand, then ends this side's sending half (a half-close: the peer may still send).
    /// </summary>
    Task SendStreamAsync(Stream source, CancellationToken cancellationToken);

    /// <summary>Completes once the peer has sent a byte on the stream or ended its side. Nothing is consumed.</summary>
    ValueTask WaitForInputAsync(CancellationToken cancellationToken);

    /// <summary>Writes the peer's bytes to <paramref name="destination"/> as they come, until the peer ends its side.</summary>
    Task CopyInputToAsync(Stream destination, CancellationToken cancellationToken);

    /// <summary>Sends the peer's bytes to <paramref name="destination"/> as they come; the socket is not shut down at the end.</summary>
    Task CopyInputToAsync(Socket destination, CancellationToken cancellationToken);

    /// <summary>
    /// From now on the peer's bytes go to <paramref name="sink"/>, from the reader's buffer. Set it in
    /// <see cref="IUplinkStreamHandler.OnByteStreamOpened"/> (on the reader's thread, before any Data frame of the stream).
    /// </summary>
    void AttachInboundSink(IStreamInboundSink sink);

    /// <summary>
    /// As <see cref="AttachInboundSink"/>, for an owner that waited for the peer's first bytes first: what is buffered
    /// goes to <paramref name="sink"/> first, then the peer's END_STREAM if it came already.
    /// </summary>
    void TakeOverInbound(IStreamInboundSink sink);

    /// <summary>The sink's destination took <paramref name="bytes"/> of the peer's bytes: the peer's credit comes back.</summary>
    void ReportInboundConsumed(int bytes);

    /// <summary>Takes up to <paramref name="max"/> bytes of send credit without waiting; 0 when there is none.</summary>
    int TryTakeSendCredit(int max);

    /// <summary>Gives back credit taken with <see cref="TryTakeSendCredit"/> and not sent.</summary>
    void ReturnUnusedSendCredit(int unused);

    /// <summary>
    /// Sends <paramref name="length"/> bytes of <paramref name="pooled"/> (rented from the shared pool; the stream owns it
    /// now) as one Data frame, under credit taken with <see cref="TryTakeSendCredit"/>. Queues it for the writer.
    /// </summary>
    /// <exception cref="StreamResetException">The stream was reset meanwhile.</exception>
    /// <exception cref="UplinkClosedException">The uplink no longer sends.</exception>
    void SendPooled(byte[] pooled, int length);
}
