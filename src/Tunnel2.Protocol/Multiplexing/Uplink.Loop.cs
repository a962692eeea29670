using System.Buffers;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Tunnel2.Loops;
using Tunnel2.Loops.Guard;
using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The uplink on an event loop (issue 52, stages 3a and 3b): its socket is adopted by the loop, which reads and
/// dispatches the frames and writes the scheduler's frames at the end of each turn (<see cref="LoopUplinkTransport"/>).
/// Nothing the dispatch reaches may block or log on the loop. The client's dispatch hands every stream to a handler that
/// starts it elsewhere, never on the reading thread. The server's hands every response head over on the thread pool,
/// except a whole small answer whose owner awaits it on this same loop (the public HTTP listener on the loop), and
/// applies a Reset there too: a reset fails the owner's wait for its head, whose continuation (the caller's 502, its log
/// line) runs on the thread that fails it.
/// </summary>
public sealed partial class Uplink
{
    /// <summary>
    /// An uplink over <paramref name="socket"/> (plain TCP, its handshake done, used by nothing else from now on) that
    /// <paramref name="loop"/> reads and writes once <see cref="RunAsync"/> starts. <paramref name="early"/> is what the
    /// handshake read past its response head: the first bytes the frame parser sees.
    /// </summary>
    /// <param name="logger">Wrapped so that a line logged on the loop is written on the thread pool.</param>
    public static Uplink OnLoop(
        EventLoop loop,
        Socket socket,
        ReadOnlyMemory<byte> early,
        UplinkSettings settings,
        ILogger logger,
        IUplinkStreamHandler streamHandler,
        string? name = null) =>
        new(new LoopUplinkTransport.Start(loop, socket, early.ToArray()), settings, UplinkRole.Client, new OffLoopLogger(logger), streamHandler, name);

    /// <summary>
    /// The server's uplink over <paramref name="socket"/> (plain TCP, its 101 sent, used by nothing else from now on),
    /// read and written by <paramref name="loop"/> once <see cref="RunAsync"/> starts; <paramref name="early"/> is what
    /// the handshake read past the login's head: the first bytes the frame parser sees.
    /// </summary>
    /// <param name="logger">Wrapped so that a line logged on the loop is written on the thread pool.</param>
    /// <param name="peerReady">Whether the client's backend is ready, as its login said (<see cref="PeerReady"/>).</param>
    public static Uplink ServerOnLoop(
        EventLoop loop,
        Socket socket,
        ReadOnlyMemory<byte> early,
        UplinkSettings settings,
        ILogger logger,
        string? name = null,
        bool peerReady = true) =>
        new(new LoopUplinkTransport.Start(loop, socket, early.ToArray()), settings, UplinkRole.Server, new OffLoopLogger(logger), null, name)
        {
            PeerReady = peerReady,
        };

    /// <summary>Whether the reader and writer run on an event loop.</summary>
    public bool IsOnLoop => _loopTransport is not null;

    /// <summary>Whether the calling code runs on this uplink's own loop thread (the server's public HTTP on its loop).</summary>
    internal bool IsOnItsLoopThread => _loopTransport is { IsOnLoopThread: true };

    /// <summary>A Reset for a stream: applied on the reading thread, or, for the server on a loop, on the thread pool.</summary>
    private void OnResetFrame(in FrameHeader header, in ReadOnlySequence<byte> payload)
    {
        var code = (ProtocolErrorCode)ReadFixed32(header, payload);
        if (FindStream(header) is not { } stream)
        {
            return;
        }

        if (_loopTransport is null || Role != UplinkRole.Server)
        {
            stream.OnReset(code);
        }
        else if (stream.TryHold()) // the hold keeps the pooled stream on this exchange until the reset is applied
        {
            ThreadPool.UnsafeQueueUserWorkItem(
                static reset =>
                {
                    reset.Stream.OnReset(reset.Code);
                    reset.Stream.Release();
                },
                (Stream: stream, Code: code),
                preferLocal: false);
        }
    }

    /// <summary>Waits (off the loop) for the loop's reader to end, then does what the pipe's reader does on its way out.</summary>
    private async Task ReadOnLoopAsync(LoopUplinkTransport transport)
    {
        LoopReadEnd end = await transport.ReadEnded.ConfigureAwait(false);
        switch (end.Fault)
        {
            case null:
                Close(end.Reason);
                break;
            case ProtocolViolationException violation:
                Log.ProtocolViolation(_logger, Name, violation.Message);
                TryEnqueue(OutboundFrame.GoAway(_streams.LastStreamId, ProtocolErrorCode.ProtocolError));
                Close($"protocol error: {violation.Message}");
                break;
            default:
                Log.UnexpectedFailure(_logger, Name, end.Fault);
                Close($"internal error: {end.Fault.Message}");
                break;
        }
    }
}

/// <summary>Why the loop's reader stopped: a close (the reason), or a fault found while dispatching.</summary>
internal readonly record struct LoopReadEnd(string Reason, Exception? Fault);
