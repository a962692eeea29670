using System.Buffers;
using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// What every owner of a stream on an uplink holds, whatever its role (<see cref="IHttpExchange"/>,
/// <see cref="IByteStream"/>): who it is, how it ends (a reset, the abort signals, <see cref="IDisposable.Dispose"/>),
/// and the body layer going out under the peer's credit. The stream object behind it is the library's own and pooled:
/// after <see cref="IDisposable.Dispose"/> it may serve another exchange, so an owner lets go of the handle there and
/// copies <see cref="Id"/> first if it needs it afterwards.
/// </summary>
/// <remarks>
/// The handle is the stream itself seen through an interface (as Kestrel's internal <c>Http2Stream</c> is seen through
/// its public features): no object, no allocation per request beyond the pooled stream's.
/// </remarks>
public interface IStreamHandle : IDisposable
{
    uint Id { get; }

    Uplink Uplink { get; }

    /// <summary>Body bytes the peer has sent on this stream so far (read as a whole, so an idle check can sample it).</summary>
    long ReceivedBytes { get; }

    /// <summary>Body bytes the uplink's writer has taken from this stream so far.</summary>
    long SentBytes { get; }

    /// <summary>Why the stream was reset, if it was.</summary>
    ProtocolErrorCode? ResetCode { get; }

    /// <summary>True once the stream was reset (by either side) or its uplink died.</summary>
    bool IsAborted { get; }

    /// <summary>Cancelled when the peer resets the stream or the uplink dies.</summary>
    CancellationToken Aborted { get; }

    /// <summary>
    /// Has <paramref name="listener"/> told when the stream is reset or its uplink dies; at once when that already
    /// happened. One listener at a time; a cheaper alternative to <see cref="Aborted"/> on the hot path.
    /// </summary>
    void SetAbortListener(IStreamAbortListener listener);

    /// <summary>
    /// Removes the listener set by <see cref="SetAbortListener"/>. True when the stream was aborted while it listened:
    /// then it has been told, by this call if the abort had not reached it yet. After this returns it is never told again.
    /// </summary>
    bool ClearAbortListener();

    /// <summary>Cancels the exchange: the peer is told with a Reset frame and both directions fail.</summary>
    void Reset(ProtocolErrorCode code);

    /// <summary>Whether the peer allows at least one more body byte now.</summary>
    bool HasSendCredit { get; }

    /// <summary>
    /// Sends <paramref name="data"/> as Data frames, each as large as credit and <see cref="UplinkSettings.DataChunkSize"/>
    /// allow. With <paramref name="endStream"/>, the last frame carries END_STREAM (an empty one when there is no data).
    /// </summary>
    ValueTask SendAsync(ReadOnlySequence<byte> data, bool endStream, CancellationToken cancellationToken);

    /// <summary>
    /// Waits for credit, then has <paramref name="fill"/> read at most that many bytes (and at most
    /// <paramref name="limit"/>) straight into the frame's buffer, and sends them: a source is read only as fast as the
    /// peer takes the body. Credit not filled goes back.
    /// </summary>
    /// <param name="fill">Reads into the buffer it is given; 0 means the source has ended.</param>
    /// <param name="waitForData">Completes once <paramref name="fill"/> would return at once.</param>
    /// <param name="state">Passed to both callbacks, so they need not capture.</param>
    /// <param name="limit">The most bytes this frame may carry.</param>
    /// <param name="endAtLimit">When the frame reaches <paramref name="limit"/>, it carries END_STREAM.</param>
    /// <param name="cancellationToken">Ends the waits.</param>
    /// <returns>How many bytes went out; 0 when the source had ended (nothing was sent).</returns>
    ValueTask<int> SendFrameAsync<TState>(
        Func<Memory<byte>, TState, CancellationToken, ValueTask<int>> fill,
        Func<TState, CancellationToken, ValueTask> waitForData,
        TState state,
        long limit,
        bool endAtLimit,
        CancellationToken cancellationToken);

    /// <summary>
    /// For an owner on an event loop, which cannot wait on tasks: takes credit and room in the uplink's queued-data budget
    /// for up to <paramref name="maxFrames"/> whole frames without waiting, has <paramref name="fill"/> read into that many
    /// pooled buffers at once (at most <paramref name="limit"/> bytes), and queues what it read as Data frames. Never
    /// waits: the status says what it would have waited for (<see cref="NotifyOnSendCredit"/> for credit,
    /// <see cref="SendFrameAsync{TState}"/> for its turn in the budget).
    /// </summary>
    /// <param name="fill">Reads into the buffers it is given, in order; 0 means the source has ended, a negative value that it has nothing now.</param>
    /// <param name="state">Passed to <paramref name="fill"/>, so it need not capture.</param>
    /// <param name="limit">The most bytes this read may carry.</param>
    /// <param name="endAtLimit">When the bytes reach <paramref name="limit"/>, the last frame carries END_STREAM.</param>
    /// <param name="maxFrames">The most frames one read fills (1 to 4).</param>
    /// <param name="sent">The bytes queued, when <see cref="SendNowStatus.Sent"/>.</param>
    /// <exception cref="StreamResetException">The stream was reset meanwhile (what was read is dropped).</exception>
    /// <exception cref="UplinkClosedException">The uplink no longer sends.</exception>
    SendNowStatus TrySendFramesNow<TState>(ScatterFill<TState> fill, TState state, long limit, bool endAtLimit, int maxFrames, out int sent);

    /// <summary>Tells <paramref name="listener"/> once when send credit is there again (at once if it is), or the stream failed.</summary>
    void NotifyOnSendCredit(ISendCreditListener listener);

    /// <summary>Ends the body this side sends.</summary>
    /// <exception cref="StreamResetException">The stream was reset.</exception>
    /// <exception cref="InvalidOperationException">This side's sending half has ended already.</exception>
    void SendEnd();

    /// <summary>Ends the body this side sends, unless it has ended already or the stream was reset; true when it ended it now.</summary>
    bool TrySendEnd();
}
