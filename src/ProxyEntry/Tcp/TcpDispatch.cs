using System.Buffers;
using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Tcp;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>
/// Puts one caller of a session's TCP port on a client whose target takes it. It picks a client under the session's
/// strategy, opens the stream, and waits for the first sign of how the dial went before the caller's bytes start to
/// flow: the target's first byte or FIN (it took the connection), the client's reset with <c>BackendConnectFailed</c>
/// (it refused), or the caller's own first bytes. Those first bytes (one read) are sent on, and also kept: while the
/// target has said nothing and the caller nothing more, a refusal is still a refusal of a connection nothing reached,
/// so the client is counted towards its ejection and the caller, with the bytes it sent, is tried on the next client
/// (HAProxy's <c>option redispatch</c>). Once the caller sends more, or the idle timeout passes first, the relay takes
/// over and a later reset goes to the caller as before. With the callers' loop (<paramref name="loop"/>), the wait for the
/// caller's bytes is the loop's readiness (<see cref="SocketReadiness"/>) and the one read is a non-blocking call, so the
/// caller's socket never enters the runtime's epoll set; without it, they are the runtime's async reads.
/// </summary>
internal sealed class TcpDispatch(TcpSessionListener listener, Socket caller, IPEndPoint remote, TcpStreamOpen open, EventLoop? loop)
{
    private const int FirstBytesSize = 16 * 1024;

    private byte[]? _firstBytes;
    private int _firstLength;

    /// <summary>The stream the relay takes over, on <see cref="Member"/>, once <see cref="RunAsync"/> says Connected.</summary>
    public IByteStream? Stream { get; private set; }

    public TcpMember? Member { get; private set; }

    /// <summary>Clients whose target refused this caller.</summary>
    public int Refusals { get; private set; }

    /// <summary>
    /// The caller's reset, when a read of this dispatch met it. The socket reports a reset only once, so the relay
    /// must learn it from here: its own reads would then see a plain end of stream, a clean close that was not one.
    /// </summary>
    public SocketException? CallerFailure { get; private set; }

    public async Task<TcpDispatchOutcome> RunAsync(TimeSpan window, CancellationToken stop)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(stop);
        deadline.CancelAfter(window);
        if (loop is not null)
        {
            caller.Blocking = false; // read here only synchronously, as the loop will
        }

        TcpMember? refused = null;
        try
        {
            for (int attempt = 0; attempt < listener.Members.Count; attempt++)
            {
#pragma warning disable CA2000 // an opened stream is relayed and disposed below
                if (listener.Members.Pick(refused) is not { } member || Open(member) is not { } stream)
#pragma warning restore CA2000
                {
                    break;
                }

                Verdict verdict = await WaitAsync(stream, deadline.Token);
                if (verdict != Verdict.Refused)
                {
                    if (verdict == Verdict.TargetAnswered)
                    {
                        member.OnTargetConnected();
                    }

                    return TcpDispatchOutcome.Connected;
                }

                Refusals++;
                listener.Members.OnTargetRefused(member, remote, stream.Id);
                Drop();
                refused = member;
            }

            return Refusals == 0 ? TcpDispatchOutcome.NoClient : TcpDispatchOutcome.AllRefused;
        }
        finally
        {
            if (_firstBytes is not null)
            {
                ArrayPool<byte>.Shared.Return(_firstBytes);
                _firstBytes = null;
            }
        }
    }

    /// <summary>The stream (and the member's count) of a dispatch that ends without a relay.</summary>
    public void Drop()
    {
        Stream?.Dispose();
        Member?.Closed();
        Stream = null;
        Member = null;
    }

    private IByteStream? Open(TcpMember member)
    {
        try
        {
#pragma warning disable CA2000 // an opened stream is returned to the caller, which owns it
            if (member.Uplink.TryOpenTcpStream(open, out IByteStream? stream) != StreamOpenStatus.Opened)
#pragma warning restore CA2000
            {
                return null;
            }

            member.Opened();
            (Stream, Member) = (stream, member);
            return stream;
        }
        catch (UplinkClosedException)
        {
            return null; // it closed between the pick and the open
        }
    }

    /// <summary>What the stream and the caller said first; the caller's first bytes are sent (again) on the way.</summary>
    private async Task<Verdict> WaitAsync(IByteStream stream, CancellationToken deadline)
    {
        if (_firstBytes is not null && !await TrySendFirstBytesAsync(stream))
        {
            return Judge(stream);
        }

        while (true)
        {
            using var either = CancellationTokenSource.CreateLinkedTokenSource(deadline);
            Task input = stream.WaitForInputAsync(either.Token).AsTask();
            Task callerReady = WaitForCallerAsync(either.Token);
            Task first = await Task.WhenAny(input, callerReady);
            await either.CancelAsync();
            // Both end however they end (judged from the tasks and the stream below); no byte was consumed, since the
            // wait for the caller only waits for its bytes.
            await input.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            await callerReady.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            _ = input.Exception;
            CallerFailure ??= callerReady.Exception?.InnerException as SocketException;

            if (first == input || stream.IsAborted || deadline.IsCancellationRequested || !callerReady.IsCompletedSuccessfully
                || _firstBytes is not null)
            {
                return Judge(stream);
            }

            FirstRead read = await TakeFirstBytesAsync();
            if (read == FirstRead.NotYet)
            {
                continue;
            }

            if (read == FirstRead.Ended || !await TrySendFirstBytesAsync(stream))
            {
                return Judge(stream);
            }
        }
    }

    /// <summary>Until the caller has bytes (or its end) to read: on the callers' loop when there is one, else a zero-byte read.</summary>
    private Task WaitForCallerAsync(CancellationToken cancel) =>
        loop is not null && SocketReadiness.TryWait(loop, caller, cancel) is { } ready
            ? ready
            : caller.ReceiveAsync(Memory<byte>.Empty, SocketFlags.None, cancel).AsTask();

    private static Verdict Judge(IByteStream stream) =>
        stream.ResetCode == ProtocolErrorCode.BackendConnectFailed ? Verdict.Refused
        : !stream.IsAborted && stream.ReceivedBytes > 0 ? Verdict.TargetAnswered
        : Verdict.Relay;

    /// <summary>One read of what the caller sent first; Ended when it ended or failed instead (the relay sees to that).</summary>
    private async Task<FirstRead> TakeFirstBytesAsync()
    {
        // As much as has arrived, at most one stream window's worth: a one-line command holds a small buffer.
        int size = Math.Clamp(caller.Available, 1, FirstBytesSize);
        _firstBytes = ArrayPool<byte>.Shared.Rent(size);
        try
        {
            _firstLength = loop is null
                ? await caller.ReceiveAsync(_firstBytes.AsMemory(0, size), SocketFlags.None)
                : ReceiveNow(size);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            CallerFailure ??= ex as SocketException;
            return FirstRead.Ended;
        }

        if (_firstLength < 0)
        {
            ArrayPool<byte>.Shared.Return(_firstBytes);
            _firstBytes = null;
            return FirstRead.NotYet;
        }

        return _firstLength > 0 ? FirstRead.Taken : FirstRead.Ended;
    }

    /// <summary>The non-blocking read after the loop said the caller is readable; -1 when nothing was there after all.</summary>
    private int ReceiveNow(int size)
    {
        int read = caller.Receive(_firstBytes.AsSpan(0, size), SocketFlags.None, out SocketError error);
        return error switch
        {
            SocketError.Success => read,
            SocketError.WouldBlock => -1,
            _ => throw new SocketException((int)error),
        };
    }

    private async Task<bool> TrySendFirstBytesAsync(IByteStream stream)
    {
        try
        {
            await stream.SendAsync(new ReadOnlySequence<byte>(_firstBytes!, 0, _firstLength), endStream: false, CancellationToken.None);
            return true;
        }
        catch (Exception ex) when (ex is StreamResetException or UplinkClosedException or InvalidOperationException or ObjectDisposedException)
        {
            return false; // the stream ended first: judged by its state
        }
    }

    private enum FirstRead
    {
        /// <summary>The caller's first bytes are in <see cref="_firstBytes"/>.</summary>
        Taken,

        /// <summary>Nothing to read after all: wait again.</summary>
        NotYet,

        /// <summary>The caller's FIN or a failure came instead.</summary>
        Ended,
    }

    private enum Verdict
    {
        /// <summary>The target sent a byte or its FIN: it took the connection.</summary>
        TargetAnswered,

        /// <summary>The client's target refused, and nothing reached a target: the next client may take the caller.</summary>
        Refused,

        /// <summary>Anything else (the caller sent more, the window passed, another reset): the relay takes over.</summary>
        Relay,
    }
}

/// <summary>How <see cref="TcpDispatch"/> ended.</summary>
internal enum TcpDispatchOutcome
{
    /// <summary>A stream for the relay.</summary>
    Connected,

    /// <summary>No client could take the caller (none, all full, unready or ejected) before any refused it.</summary>
    NoClient,

    /// <summary>Every client tried had its target refuse.</summary>
    AllRefused,
}
