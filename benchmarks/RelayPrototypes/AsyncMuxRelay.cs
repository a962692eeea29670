using System.Buffers;
using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;

namespace Tunnel2.RelayPrototypes;

/// <summary>
/// Design (c): the runtime's own engine (async <see cref="Socket"/> calls) multiplexing over one link with the same frames
/// and windows as design (a). Run it with DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT=1 and
/// DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 (every continuation on the one epoll thread), or without them (the
/// engine's default: continuations on the thread pool). No hand-off of its own: a caller's pump frames its bytes and, when
/// no send is in flight on the link, sends them itself; frames queued meanwhile go out together in one gather send by
/// whoever is sending (and their pumps wait for that). The link's reader sends a frame's payload to its socket straight
/// from the buffer it read into. When that send cannot complete at once, the buffer stays with the stream (reference-counted) and the reader
/// goes on with a fresh one, so a slow socket holds up neither the other streams nor a copy.
/// </summary>
internal sealed class AsyncMuxRelay
{
    /// <summary>A link read buffer, shared by the sends that still need it.</summary>
    private sealed class Chunk
    {
        public readonly byte[] Data = ArrayPool<byte>.Shared.Rent(256 * 1024);
        private int _refs = 1;
        public void AddRef() => Interlocked.Increment(ref _refs);
        public void Release()
        {
            if (Interlocked.Decrement(ref _refs) == 0)
            {
                ArrayPool<byte>.Shared.Return(Data);
            }
        }
    }

    private sealed class Stream(uint id)
    {
        public readonly uint Id = id;
        public Socket? Socket;
        public readonly object Gate = new();
        public int Credit = Frame.Window;                  // guarded by Gate
        public TaskCompletionSource? CreditWaiter;         // guarded by Gate
        public int Unacked;                                // guarded by Gate
        public readonly Queue<(Chunk Chunk, int Offset, int Length)> Pending = new(); // guarded by Gate
        public bool Sending;                               // a drain (or the agent's connect) owns the socket's sends
        public bool PeerFin, LocalEof, Closed;
    }

    private readonly Socket _link;
    private readonly object _writeGate = new();
    private List<(ReadOnlyMemory<byte> Frame, TaskCompletionSource? Sent)> _queued = [];   // guarded by _writeGate
    private List<(ReadOnlyMemory<byte> Frame, TaskCompletionSource? Sent)> _sending = [];
    private bool _writing;                                                                  // guarded by _writeGate
    private readonly ConcurrentDictionary<uint, Stream> _streams = new();
    private readonly IPEndPoint? _target;
    private uint _nextId = 1;

    private AsyncMuxRelay(Socket link, IPEndPoint? target)
    {
        _link = link;
        _link.NoDelay = true;
        _target = target;
    }

    public static async Task RunEntryAsync(IPEndPoint listen, IPEndPoint link)
    {
        using var callers = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        callers.Bind(listen);
        callers.Listen(4096);
        using var linkListener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        linkListener.Bind(link);
        linkListener.Listen(1);
        var relay = new AsyncMuxRelay(await linkListener.AcceptAsync(), target: null);
        var reader = relay.ReadLinkAsync();
        while (!reader.IsCompleted)
        {
            var socket = await callers.AcceptAsync();
            socket.NoDelay = true;
            var stream = new Stream(relay._nextId++) { Socket = socket };
            relay._streams[stream.Id] = stream;
            await relay.SendControlAsync(FrameType.Open, stream.Id, 0);
            _ = relay.PumpAsync(stream);
        }
    }

    public static async Task RunAgentAsync(IPEndPoint link, IPEndPoint target)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(link);
        await new AsyncMuxRelay(socket, target).ReadLinkAsync();
    }

    /// <summary>A caller's or target's bytes to the link, read behind a reserved header and sent as one frame.</summary>
    private async Task PumpAsync(Stream stream)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(Frame.HeaderSize + Frame.MaxPayload);
        try
        {
            while (true)
            {
                int credit = await CreditAsync(stream);
                int n;
                try
                {
                    n = await stream.Socket!.ReceiveAsync(buffer.AsMemory(Frame.HeaderSize, Math.Min(credit, Frame.MaxPayload)), SocketFlags.None);
                }
                catch (SocketException)
                {
                    Fail(stream);
                    n = 0;
                }
                catch (ObjectDisposedException)
                {
                    n = 0;   // failed meanwhile
                }
                if (n == 0)
                {
                    break;
                }
                lock (stream.Gate)
                {
                    stream.Credit -= n;
                }
                Frame.Write(buffer, FrameType.Data, stream.Id, n);
                await SendLinkAsync(buffer.AsMemory(0, Frame.HeaderSize + n), waitUntilSent: true);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
        bool failed;
        lock (stream.Gate)
        {
            stream.LocalEof = true;
            failed = stream.Closed;
        }
        if (!failed)
        {
            await SendControlAsync(FrameType.Fin, stream.Id, 0);
        }
        CloseIfDone(stream);
    }

    private static async ValueTask<int> CreditAsync(Stream stream)
    {
        while (true)
        {
            TaskCompletionSource waiter;
            lock (stream.Gate)
            {
                if (stream.Credit > 0)
                {
                    return stream.Credit;
                }
                waiter = stream.CreditWaiter = new TaskCompletionSource();
            }
            await waiter.Task;
        }
    }

    /// <summary>
    /// Queues a frame for the link; the caller that finds no send in flight sends everything queued, in one gather send per
    /// batch, until the queue is empty. A data frame's task completes once its buffer may be reused.
    /// </summary>
    private Task SendLinkAsync(ReadOnlyMemory<byte> frame, bool waitUntilSent)
    {
        var sent = waitUntilSent ? new TaskCompletionSource() : null;
        lock (_writeGate)
        {
            _queued.Add((frame, sent));
            if (_writing)
            {
                return sent?.Task ?? Task.CompletedTask;
            }
            _writing = true;
        }
        _ = WriteQueuedAsync();
        return sent?.Task ?? Task.CompletedTask;
    }

    private async Task WriteQueuedAsync()
    {
        var segments = new List<ArraySegment<byte>>();
        while (true)
        {
            lock (_writeGate)
            {
                if (_queued.Count == 0)
                {
                    _writing = false;
                    return;
                }
                (_queued, _sending) = (_sending, _queued);
            }
            segments.Clear();
            foreach (var (frame, _) in _sending)
            {
                segments.Add(System.Runtime.InteropServices.MemoryMarshal.TryGetArray(frame, out var array) ? array : frame.ToArray());
            }
            try
            {
                await _link.SendAsync(segments, SocketFlags.None);
            }
            catch (SocketException e)
            {
                Console.Error.WriteLine($"the link failed: {e.SocketErrorCode}");
                Environment.Exit(1);
            }
            foreach (var (_, sent) in _sending)
            {
                sent?.SetResult();
            }
            _sending.Clear();
        }
    }

    private Task SendControlAsync(FrameType type, uint id, int length)
    {
        byte[] header = new byte[Frame.HeaderSize];
        Frame.Write(header, type, id, length);
        return SendLinkAsync(header, waitUntilSent: false);
    }

    private async Task ReadLinkAsync()
    {
        var chunk = new Chunk();
        byte[] header = new byte[Frame.HeaderSize];
        int headerLength = 0, payloadLeft = 0;
        Stream? payloadStream = null;
        while (true)
        {
            int n = await _link.ReceiveAsync(chunk.Data, SocketFlags.None);
            if (n == 0)
            {
                Console.Error.WriteLine("the link closed");
                Environment.Exit(0);
            }
            int at = 0;
            while (at < n)
            {
                if (payloadLeft > 0)
                {
                    int take = Math.Min(payloadLeft, n - at);
                    if (payloadStream is not null)
                    {
                        Deliver(payloadStream, chunk, at, take);
                    }
                    payloadLeft -= take;
                    at += take;
                    continue;
                }
                int headerPart = Math.Min(Frame.HeaderSize - headerLength, n - at);
                chunk.Data.AsSpan(at, headerPart).CopyTo(header.AsSpan(headerLength));
                headerLength += headerPart;
                at += headerPart;
                if (headerLength < Frame.HeaderSize)
                {
                    break;
                }
                headerLength = 0;
                var (type, id, length) = Frame.Read(header);
                _streams.TryGetValue(id, out var stream);
                switch (type)
                {
                    case FrameType.Open when _target is not null:
                        OpenTarget(id);
                        break;
                    case FrameType.Data:
                        payloadStream = stream;
                        payloadLeft = length;
                        break;
                    case FrameType.Window when stream is not null:
                        TaskCompletionSource? waiter;
                        lock (stream.Gate)
                        {
                            stream.Credit += length;
                            waiter = stream.CreditWaiter;
                            stream.CreditWaiter = null;
                        }
                        waiter?.SetResult();
                        break;
                    case FrameType.Reset when stream is not null:
                        Fail(stream, tellPeer: false);
                        break;
                    case FrameType.Fin when stream is not null:
                        bool shut;
                        lock (stream.Gate)
                        {
                            stream.PeerFin = true;
                            shut = !stream.Sending && !stream.Closed;
                        }
                        if (shut)
                        {
                            ShutdownSend(stream);
                        }
                        break;
                    default:
                        break;
                }
            }
            chunk.Release();   // the sends still in flight hold their own references
            chunk = new Chunk();
        }
    }

    private void OpenTarget(uint id)
    {
        var stream = new Stream(id) { Sending = true };   // the connect owns the sends until it is done
        _streams[id] = stream;
        _ = ConnectAsync(stream);
    }

    private async Task ConnectAsync(Stream stream)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            await socket.ConnectAsync(_target!);
        }
        catch (SocketException e)
        {
            Console.Error.WriteLine($"connect to {_target}: {e.SocketErrorCode}");
            socket.Dispose();
            lock (stream.Gate)
            {
                stream.LocalEof = true;
            }
            Fail(stream);
            return;
        }
        stream.Socket = socket;
        _ = PumpAsync(stream);
        await DrainAsync(stream);
    }

    /// <summary>A frame's payload to its socket: sent now from the link's buffer, or queued behind the sends in flight.</summary>
    private void Deliver(Stream stream, Chunk chunk, int offset, int length)
    {
        lock (stream.Gate)
        {
            if (stream.Closed)
            {
                return;
            }
            if (stream.Sending)
            {
                chunk.AddRef();
                stream.Pending.Enqueue((chunk, offset, length));
                return;
            }
            stream.Sending = true;
        }
        ValueTask<int> send;
        try
        {
            send = stream.Socket!.SendAsync(chunk.Data.AsMemory(offset, length), SocketFlags.None);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            Fail(stream);
            return;
        }
        if (send.IsCompletedSuccessfully)
        {
            lock (stream.Gate)
            {
                stream.Sending = false;
            }
            Delivered(stream, length);
            return;
        }
        chunk.AddRef();
        _ = FinishSendAsync(stream, send, chunk, length);
    }

    private async Task FinishSendAsync(Stream stream, ValueTask<int> send, Chunk chunk, int length)
    {
        try
        {
            await send;
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            chunk.Release();
            Fail(stream);
            return;
        }
        chunk.Release();
        Delivered(stream, length);
        await DrainAsync(stream);
    }

    /// <summary>Sends what queued while a send or the connect was in flight; then gives the sends back to the reader.</summary>
    private async Task DrainAsync(Stream stream)
    {
        while (true)
        {
            (Chunk Chunk, int Offset, int Length) next;
            bool shut = false;
            lock (stream.Gate)
            {
                if (!stream.Pending.TryDequeue(out next))
                {
                    stream.Sending = false;
                    shut = stream.PeerFin && !stream.Closed;
                }
            }
            if (next.Chunk is null)
            {
                if (shut)
                {
                    ShutdownSend(stream);
                }
                return;
            }
            try
            {
                await stream.Socket!.SendAsync(next.Chunk.Data.AsMemory(next.Offset, next.Length), SocketFlags.None);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                next.Chunk.Release();
                Fail(stream);
                return;
            }
            next.Chunk.Release();
            Delivered(stream, next.Length);
        }
    }

    private void Delivered(Stream stream, int bytes)
    {
        int credit = 0;
        lock (stream.Gate)
        {
            stream.Unacked += bytes;
            if (stream.Unacked >= Frame.WindowUpdateThreshold)
            {
                credit = stream.Unacked;
                stream.Unacked = 0;
            }
        }
        if (credit > 0)
        {
            _ = SendControlAsync(FrameType.Window, stream.Id, credit);
        }
    }

    private void ShutdownSend(Stream stream)
    {
        try
        {
            stream.Socket?.Shutdown(SocketShutdown.Send);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // the caller or target is gone already; its pump ends the stream
        }
        CloseIfDone(stream);
    }

    /// <summary>
    /// A socket error, here or (a Reset frame) at the other side: the stream ends both ways at once. The socket goes; its
    /// pump, if it runs, stops without a FIN and the stream is forgotten once it has.
    /// </summary>
    private void Fail(Stream stream, bool tellPeer = true)
    {
        lock (stream.Gate)
        {
            if (stream.Closed)
            {
                return;
            }
            stream.Closed = stream.PeerFin = true;
            stream.Sending = false;
        }
        DropPending(stream);
        if (tellPeer)
        {
            _ = SendControlAsync(FrameType.Reset, stream.Id, 0);
        }
        stream.Socket?.Dispose();
        CloseIfDone(stream);
    }

    private static void DropPending(Stream stream)
    {
        lock (stream.Gate)
        {
            while (stream.Pending.TryDequeue(out var item))
            {
                item.Chunk.Release();
            }
        }
    }

    private void CloseIfDone(Stream stream)
    {
        lock (stream.Gate)
        {
            if (!stream.LocalEof || !stream.PeerFin || stream.Sending || stream.Pending.Count > 0)
            {
                return;
            }
            stream.Closed = true;
        }
        stream.Socket?.Dispose();
        _streams.TryRemove(stream.Id, out _);
    }
}
