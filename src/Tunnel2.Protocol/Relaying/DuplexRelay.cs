using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.Protocol.Relaying;

/// <summary>
/// Bytes both ways between a stream and a local connection until both ways end, with one result (YARP's
/// <c>StreamCopier</c> and the upgrade step of its forwarder): the HTTP upgrades on both sides and the TCP relays on
/// both sides. A clean end one way (a FIN, END_STREAM) is passed on as a half-close and the other way goes on; a
/// failure either way ends both: the stream is reset, a socket is closed with a reset. docs/protocol.md, "One relay for upgrades and TCP".
/// </summary>
/// <remarks>
/// Callers see only <see cref="DuplexRelayResult"/>: the body may move to an event loop (issue 52) without them changing.
/// Idle timeouts stay with the owner, who watches the stream's byte counts and resets it.
/// </remarks>
public static class DuplexRelay
{
    /// <param name="localFailure">The reset code the peer gets when the local connection broke (the peer did not reset first).</param>
    /// <param name="cancellationToken">Ends the relay as a failure (e.g. the caller's connection aborted).</param>
    public static async Task<DuplexRelayResult> RunAsync(IByteStream stream, RelayEnd local,
        ProtocolErrorCode localFailure = ProtocolErrorCode.Cancelled, CancellationToken cancellationToken = default)
    {
        // Only an end that cannot half-close needs to stop its reads when the tunnel's side ends; the others take no token source.
        using CancellationTokenSource? ended = local.CanHalfClose ? null : CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        CancellationToken token = ended?.Token ?? cancellationToken;
        var order = new RelayEndOrder();
        Task fromLocal = FromLocalAsync(stream, local, order, token);
        Task fromTunnel = FromTunnelAsync(stream, local, order, token);
        Task first = await Task.WhenAny(fromLocal, fromTunnel).ConfigureAwait(false);
        RelaySide firstSide = first == fromLocal ? RelaySide.Local : RelaySide.Tunnel;
        Failure failure = default;
        bool stopped = false;
        if (!first.IsCompletedSuccessfully)
        {
            failure = await FailAsync(stream, local, firstSide, first, localFailure, ended).ConfigureAwait(false);
        }
        else if (first == fromTunnel && ended is not null)
        {
            // The tunnel's side ended and this end cannot pass that on alone: the exchange is over.
            stopped = true;
            await ended.CancelAsync().ConfigureAwait(false);
        }

        // Each direction ends however it ends, judged from its task; its exception is observed here.
        await fromLocal.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await fromTunnel.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        _ = fromLocal.Exception;
        _ = fromTunnel.Exception;
        if (failure.Side is null && !(fromLocal.IsCompletedSuccessfully && fromTunnel.IsCompletedSuccessfully))
        {
            if (stopped)
            {
                stream.Reset(ProtocolErrorCode.Cancelled); // this side's half never ended: the peer is told it is abandoned
            }
            else
            {
                RelaySide side = fromLocal.IsCompletedSuccessfully ? RelaySide.Tunnel : RelaySide.Local;
                failure = await FailAsync(stream, local, side, side == RelaySide.Local ? fromLocal : fromTunnel, localFailure, ended).ConfigureAwait(false);
            }
        }

        RelayOutcome fromLocalOutcome = stopped && !fromLocal.IsCompletedSuccessfully ? RelayOutcome.Canceled : OutcomeOf(fromLocal);
        // The side that ended first as each direction noted it, which the task that completed first need not say.
        return new DuplexRelayResult(order.First ?? firstSide, fromLocalOutcome, OutcomeOf(fromTunnel), failure.Side,
            failure.Error, failure.PeerReset, cancellationToken.IsCancellationRequested, stream.SentBytes, stream.ReceivedBytes);
    }

    /// <summary>
    /// One way broke: noted (with the stream's reset code as found, so a reset from the peer is told apart from this
    /// side's), then the other way is ended too: the stream is reset, a socket cut.
    /// </summary>
    private static async ValueTask<Failure> FailAsync(IByteStream stream, RelayEnd local, RelaySide side, Task direction,
        ProtocolErrorCode localFailure, CancellationTokenSource? ended)
    {
        var failure = new Failure(side, direction.Exception?.InnerException, stream.ResetCode);
        if (ended is not null)
        {
            await ended.CancelAsync().ConfigureAwait(false);
        }

        stream.Reset(side == RelaySide.Local && failure.PeerReset is null ? localFailure : ProtocolErrorCode.Cancelled);
        if (local.Socket is { } socket)
        {
            RelayEnd.Reset(socket);
        }

        return failure;
    }

    /// <summary>The local connection's bytes into Data frames, its end as END_STREAM.</summary>
    private static async Task FromLocalAsync(IByteStream stream, RelayEnd local, RelayEndOrder order, CancellationToken cancellationToken)
    {
        try
        {
            await (local.Socket is { } socket ? SocketToStream.PumpAsync(socket, stream)
                : local.Buffered is { } buffered ? FromBufferedStreamAsync(stream, buffered, local.Stream!, cancellationToken)
                : stream.SendStreamAsync(local.Stream!, cancellationToken)).ConfigureAwait(false);
        }
        finally
        {
            // A clean end was passed on before this (END_STREAM); the tunnel's direction finds that out by the stream.
            order.Note(RelaySide.Local);
        }
    }

    /// <summary>What a head's read took in past the head goes first; then the stream is read straight into Data frames.</summary>
    private static async Task FromBufferedStreamAsync(IByteStream stream, PipeReader buffered, Stream source, CancellationToken cancellationToken)
    {
        if (buffered.TryRead(out ReadResult read))
        {
            ReadOnlySequence<byte> early = read.Buffer;
            try
            {
                if (!early.IsEmpty || read.IsCompleted)
                {
                    await stream.SendAsync(early, endStream: read.IsCompleted, cancellationToken).ConfigureAwait(false);
                }
            }
            finally
            {
                buffered.AdvanceTo(early.End);
            }

            if (read.IsCompleted)
            {
                return;
            }
        }

        await stream.SendStreamAsync(source, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The peer's bytes from the stream's inbound buffer to the local connection, its END_STREAM as a half-close.</summary>
    private static async Task FromTunnelAsync(IByteStream stream, RelayEnd local, RelayEndOrder order, CancellationToken cancellationToken)
    {
        try
        {
            await (local.Socket is { } to ? stream.CopyInputToAsync(to, cancellationToken)
                : stream.CopyInputToAsync(local.Stream!, cancellationToken)).ConfigureAwait(false);
        }
        finally
        {
            // Before the end is passed on: the local side may answer it at once (and end the other direction).
            order.NoteTunnelEnd(stream);
        }

        if (local.Socket is { } socket)
        {
            socket.Shutdown(SocketShutdown.Send); // the peer's FIN, passed on; a socket already reset fails this way
            return;
        }

        if (local.HalfClose is { } under)
        {
            try
            {
                under.Shutdown(SocketShutdown.Send);
            }
            catch (Exception ex) when (ex is ObjectDisposedException or SocketException)
            {
                // Already closed or reset: the other direction finds out on its own.
            }
        }
    }

    private static RelayOutcome OutcomeOf(Task direction) =>
        direction.IsCompletedSuccessfully ? RelayOutcome.Completed
        : direction.IsCanceled ? RelayOutcome.Canceled
        : RelayOutcome.Failed;

    private readonly record struct Failure(RelaySide? Side, Exception? Error, ProtocolErrorCode? PeerReset);
}
