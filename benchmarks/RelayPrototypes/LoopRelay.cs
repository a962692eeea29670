using System.Buffers;
using System.Net;
using System.Net.Sockets;

namespace Tunnel2.RelayPrototypes;

/// <summary>
/// Design (a): run to completion on one thread. One epoll set holds the link and every caller's or target's socket, all
/// non-blocking raw descriptors, level-triggered. A caller's bytes are read straight into the link's output buffer
/// behind a reserved frame header; the buffer goes out with one send per loop turn (or when full). Data from the link is
/// parsed in place and sent to its socket at once; only what that socket cannot take now is copied aside, and credit
/// goes back (a Window frame) once half a window has been handed on, as ssh does.
/// </summary>
internal sealed class LoopRelay
{
    private sealed class Stream(uint id, int fd, bool connected)
    {
        public readonly uint Id = id;
        public readonly int Fd = fd;
        public bool Connected = connected;      // the agent's target connect has completed
        public int Credit = Frame.Window;       // bytes this side may still send on the link
        public int Unacked;                     // bytes handed to Fd and not yet returned as credit
        public readonly Queue<(byte[] Buffer, int Length)> Pending = new(); // what Fd could not take yet
        public int PendingOffset;               // bytes of Pending's head already sent
        public bool LocalEof, PeerFin, WriteShut, Dead, Hup, WaitingForLink;
        public int Interest = -1;               // epoll events asked for; -1 when not in the epoll set
    }

    private readonly bool _entry;
    private readonly IPEndPoint? _target;
    private readonly int _epoll = Native.epoll_create1(0);
    private readonly int _callers = -1;
    private readonly Socket _linkSocket;        // kept alive: its descriptor is used raw
    private readonly int _link;
    private readonly Dictionary<int, Stream> _byFd = [];
    private readonly Dictionary<uint, Stream> _byId = [];
    private readonly List<Stream> _waitingForLink = [];
    private uint _nextId = 1;

    private byte[] _out = new byte[Math.Max(1 << 20, 4 * Frame.ReadSize)];
    private int _outStart, _outEnd;
    private bool _linkBlocked;   // the link's send buffer is full: wait for EPOLLOUT
    private bool _linkOut;       // EPOLLOUT is in the link's interest

    private readonly byte[] _in = new byte[Math.Max(256 * 1024, 2 * Frame.ReadSize)];
    private readonly byte[] _header = new byte[Frame.HeaderSize];
    private int _headerLength;
    private Stream? _payloadStream;
    private int _payloadLeft;

    private LoopRelay(bool entry, Socket link, IPEndPoint? target, int callers)
    {
        _entry = entry;
        _target = target;
        _callers = callers;
        _linkSocket = link;
        _linkSocket.Blocking = false;
        _link = (int)_linkSocket.SafeHandle.DangerousGetHandle();
        Native.Tune(_link);
        Native.Control(_epoll, Native.EpollCtlAdd, _link, Native.EpollIn);
        if (_callers >= 0)
        {
            Native.Control(_epoll, Native.EpollCtlAdd, _callers, Native.EpollIn);
        }
    }

    /// <summary>The entry: callers on <paramref name="listen"/>; waits for its one agent on <paramref name="link"/>.</summary>
    public static LoopRelay Entry(IPEndPoint listen, IPEndPoint link)
    {
        int callers = Native.Listen(listen);
        using var linkListener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        linkListener.Bind(link);
        linkListener.Listen(1);
        return new LoopRelay(entry: true, linkListener.Accept(), target: null, callers);
    }

    /// <summary>The agent: dials the entry's link port; each stream the entry opens dials <paramref name="target"/>.</summary>
    public static LoopRelay Agent(IPEndPoint link, IPEndPoint target)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Connect(link);
        return new LoopRelay(entry: false, socket, target, callers: -1);
    }

    public unsafe void Run()
    {
        const int MaxEvents = 256;
        Native.EpollEvent* events = stackalloc Native.EpollEvent[MaxEvents];
        while (true)
        {
            int count = Native.epoll_wait(_epoll, events, MaxEvents, -1);
            if (count < 0)
            {
                if (Native.Errno == Native.EIntr)
                {
                    continue;
                }
                throw new InvalidOperationException($"epoll_wait failed: errno {Native.Errno}");
            }
            for (int i = 0; i < count; i++)
            {
                int fd = (int)events[i].Data, ready = (int)events[i].Events;
                if (fd == _link)
                {
                    _linkBlocked &= (ready & Native.EpollOut) == 0;
                    if ((ready & ~Native.EpollOut) != 0 && !ReadLink())
                    {
                        return;
                    }
                }
                else if (fd == _callers)
                {
                    AcceptCallers();
                }
                else if (_byFd.TryGetValue(fd, out var stream))
                {
                    OnStream(stream, ready);
                }
            }
            if (!Flush())
            {
                return;
            }
        }
    }

    private void AcceptCallers()
    {
        int fd;
        while ((fd = Native.Accept(_callers)) >= 0)
        {
            var stream = new Stream(_nextId++, fd, connected: true);
            _byFd[fd] = stream;
            _byId[stream.Id] = stream;
            AppendControl(FrameType.Open, stream.Id, 0);
            UpdateInterest(stream);
        }
    }

    private void OpenTarget(uint id)
    {
        Stream stream;
        try
        {
            stream = new Stream(id, Native.Connect(_target!), connected: false);
        }
        catch (InvalidOperationException e)
        {
            Console.Error.WriteLine(e.Message);
            AppendControl(FrameType.Reset, id, 0);
            return;
        }
        _byFd[stream.Fd] = stream;
        _byId[id] = stream;
        UpdateInterest(stream);
    }

    private void OnStream(Stream stream, int ready)
    {
        if ((ready & Native.EpollErr) != 0)
        {
            Fail(stream);
            return;
        }
        stream.Hup |= (ready & Native.EpollHup) != 0;
        if ((ready & Native.EpollOut) != 0)
        {
            Drain(stream);
        }
        if ((ready & (Native.EpollIn | Native.EpollHup)) != 0 && (stream.Interest & Native.EpollIn) != 0 && !stream.Dead)
        {
            ReadStream(stream);
        }
        UpdateInterest(stream);
        MaybeRemove(stream);
    }

    /// <summary>A caller's or target's bytes, read straight into the link's output buffer as data frames.</summary>
    private void ReadStream(Stream stream)
    {
        for (int i = 0; i < 4 && stream.Credit > 0; i++)
        {
            if (_out.Length - _outEnd - Frame.HeaderSize < 4096)
            {
                stream.WaitingForLink = true;
                _waitingForLink.Add(stream);
                return;
            }
            if (Frame.ReadSize > Frame.MaxPayload)
            {
                if (!ReadFramed(stream))
                {
                    return;
                }
                continue;
            }
            int want = Math.Min(Math.Min(_out.Length - _outEnd - Frame.HeaderSize, Frame.MaxPayload), stream.Credit);
            int n = Native.Recv(stream.Fd, _out.AsSpan(_outEnd + Frame.HeaderSize, want));
            if (n == -1)
            {
                return;
            }
            if (n <= 0)
            {
                if (n == -2)
                {
                    Fail(stream);
                    return;
                }
                stream.LocalEof = true;
                AppendControl(FrameType.Fin, stream.Id, 0);
                return;
            }
            Frame.Write(_out.AsSpan(_outEnd), FrameType.Data, stream.Id, n);
            _outEnd += Frame.HeaderSize + n;
            stream.Credit -= n;
            if (n < want)
            {
                return;
            }
        }
    }

    /// <summary>
    /// One read larger than a frame (RELAY_READ_KIB): readv into the link's output buffer as several frames' payloads,
    /// each behind the hole its header is then written into.
    /// </summary>
    /// <returns>true when the read filled all it asked for (more may be waiting).</returns>
    private bool ReadFramed(Stream stream)
    {
        int step = Frame.HeaderSize + Frame.MaxPayload, room = _out.Length - _outEnd;
        int fits = room / step * Frame.MaxPayload + Math.Max(0, room % step - Frame.HeaderSize);
        int want = Math.Min(Math.Min(Frame.ReadSize, stream.Credit), fits);
        int n = Native.RecvFramed(stream.Fd, _out.AsSpan(_outEnd), Frame.MaxPayload, Frame.HeaderSize, want);
        if (n == -1)
        {
            return false;
        }
        if (n <= 0)
        {
            if (n == -2)
            {
                Fail(stream);
                return false;
            }
            stream.LocalEof = true;
            AppendControl(FrameType.Fin, stream.Id, 0);
            return false;
        }
        for (int left = n; left > 0; left -= Frame.MaxPayload)
        {
            int length = Math.Min(left, Frame.MaxPayload);
            Frame.Write(_out.AsSpan(_outEnd), FrameType.Data, stream.Id, length);
            _outEnd += Frame.HeaderSize + length;
        }
        stream.Credit -= n;
        return n == want;
    }

    /// <returns>false when the link is gone.</returns>
    private bool ReadLink()
    {
        for (int i = 0; i < 4; i++)
        {
            int n = Native.Recv(_link, _in);
            if (n == -1)
            {
                return true;
            }
            if (n <= 0)
            {
                Console.Error.WriteLine("the link closed");
                return false;
            }
            Parse(_in.AsSpan(0, n));
            if (n < _in.Length)
            {
                return true;
            }
        }
        return true;
    }

    private void Parse(ReadOnlySpan<byte> data)
    {
        while (data.Length > 0)
        {
            if (_payloadLeft > 0)
            {
                int take = Math.Min(_payloadLeft, data.Length);
                if (_payloadStream is { } target)
                {
                    Deliver(target, data[..take]);
                }
                _payloadLeft -= take;
                data = data[take..];
                continue;
            }
            int headerPart = Math.Min(Frame.HeaderSize - _headerLength, data.Length);
            data[..headerPart].CopyTo(_header.AsSpan(_headerLength));
            _headerLength += headerPart;
            data = data[headerPart..];
            if (_headerLength < Frame.HeaderSize)
            {
                return;
            }
            _headerLength = 0;
            var (type, id, length) = Frame.Read(_header);
            _byId.TryGetValue(id, out var stream);
            switch (type)
            {
                case FrameType.Open when !_entry:
                    OpenTarget(id);
                    break;
                case FrameType.Data:
                    _payloadStream = stream;
                    _payloadLeft = length;
                    break;
                case FrameType.Window when stream is not null:
                    stream.Credit += length;
                    UpdateInterest(stream);
                    break;
                case FrameType.Fin when stream is not null:
                    stream.PeerFin = true;
                    ShutWhenDrained(stream);
                    MaybeRemove(stream);
                    break;
                case FrameType.Reset when stream is not null:
                    Fail(stream, tellPeer: false);
                    break;
                default:
                    break;
            }
        }
    }

    /// <summary>Link data for a stream: sent to its socket now; what it cannot take is copied aside until EPOLLOUT.</summary>
    private void Deliver(Stream stream, ReadOnlySpan<byte> data)
    {
        if (stream.Dead)
        {
            return;
        }
        int sent = 0;
        if (stream.Connected && stream.Pending.Count == 0)
        {
            sent = Native.Send(stream.Fd, data);
            if (sent < 0)
            {
                Fail(stream);
                return;
            }
            Delivered(stream, sent);
        }
        if (sent < data.Length)
        {
            byte[] copy = ArrayPool<byte>.Shared.Rent(data.Length - sent);
            data[sent..].CopyTo(copy);
            stream.Pending.Enqueue((copy, data.Length - sent));
            UpdateInterest(stream);
        }
    }

    private void Delivered(Stream stream, int bytes)
    {
        stream.Unacked += bytes;
        if (stream.Unacked >= Frame.WindowUpdateThreshold)
        {
            AppendControl(FrameType.Window, stream.Id, stream.Unacked);
            stream.Unacked = 0;
        }
    }

    private void Drain(Stream stream)
    {
        if (stream.Dead)
        {
            return;
        }
        if (!stream.Connected)
        {
            if (Native.SocketError(stream.Fd) != 0)
            {
                Fail(stream);
                return;
            }
            stream.Connected = true;
        }
        while (stream.Pending.TryPeek(out var head))
        {
            int sent = Native.Send(stream.Fd, head.Buffer.AsSpan(stream.PendingOffset, head.Length - stream.PendingOffset));
            if (sent < 0)
            {
                Fail(stream);
                return;
            }
            Delivered(stream, sent);
            stream.PendingOffset += sent;
            if (stream.PendingOffset < head.Length)
            {
                break;
            }
            stream.Pending.Dequeue();
            stream.PendingOffset = 0;
            ArrayPool<byte>.Shared.Return(head.Buffer);
        }
        ShutWhenDrained(stream);
    }

    private static void ShutWhenDrained(Stream stream)
    {
        if (stream.PeerFin && !stream.WriteShut && !stream.Dead && stream.Connected && stream.Pending.Count == 0)
        {
            Native.ShutdownWrite(stream.Fd);
            stream.WriteShut = true;
        }
    }

    /// <summary>A socket error, here or (a Reset frame) at the other side: the stream ends both ways at once.</summary>
    private void Fail(Stream stream, bool tellPeer = true)
    {
        if (stream.Dead)
        {
            return;
        }
        if (tellPeer)
        {
            AppendControl(FrameType.Reset, stream.Id, 0);
        }
        stream.LocalEof = stream.PeerFin = stream.Dead = true;
        while (stream.Pending.TryDequeue(out var item))
        {
            ArrayPool<byte>.Shared.Return(item.Buffer);
        }
        _byFd.Remove(stream.Fd);
        Native.close(stream.Fd);
        MaybeRemove(stream);
    }

    private void MaybeRemove(Stream stream)
    {
        if (!stream.LocalEof || !stream.PeerFin || (!stream.Dead && (stream.Pending.Count > 0 || !stream.WriteShut)))
        {
            return;
        }
        if (!stream.Dead)
        {
            stream.Dead = true;
            _byFd.Remove(stream.Fd);
            Native.close(stream.Fd);
        }
        _byId.Remove(stream.Id);
    }

    private void UpdateInterest(Stream stream)
    {
        if (stream.Dead)
        {
            return;
        }
        int want = 0;
        if (stream.Connected && !stream.LocalEof && stream.Credit > 0 && !stream.WaitingForLink)
        {
            want |= Native.EpollIn;
        }
        if (!stream.Connected || stream.Pending.Count > 0)
        {
            want |= Native.EpollOut;
        }
        if (want == 0 && (stream.Hup || stream.LocalEof))
        {
            want = -1;  // nothing to wait for: out of the set, so that a hang-up is not reported over and over
        }
        if (want == stream.Interest)
        {
            return;
        }
        int op = stream.Interest == -1 ? Native.EpollCtlAdd : want == -1 ? Native.EpollCtlDel : Native.EpollCtlMod;
        Native.Control(_epoll, op, stream.Fd, Math.Max(want, 0));
        stream.Interest = want;
    }

    private void AppendControl(FrameType type, uint id, int length)
    {
        if (_out.Length - _outEnd < Frame.HeaderSize)
        {
            Array.Resize(ref _out, _out.Length * 2);
        }
        Frame.Write(_out.AsSpan(_outEnd), type, id, length);
        _outEnd += Frame.HeaderSize;
    }

    /// <summary>End of a loop turn: what this turn framed goes out in one send.</summary>
    /// <returns>false when the link is gone.</returns>
    private bool Flush()
    {
        if (_outEnd == _outStart || _linkBlocked)
        {
            return true;
        }
        int sent = Native.Send(_link, _out.AsSpan(_outStart, _outEnd - _outStart));
        if (sent < 0)
        {
            Console.Error.WriteLine("the link failed");
            return false;
        }
        _outStart += sent;
        if (_outStart < _outEnd)
        {
            _linkBlocked = _linkOut = true;
            Native.Control(_epoll, Native.EpollCtlMod, _link, Native.EpollIn | Native.EpollOut);
            return true;
        }
        if (_linkOut)
        {
            // (after a blocked send) back to reading only
            Native.Control(_epoll, Native.EpollCtlMod, _link, Native.EpollIn);
            _linkOut = false;
        }
        _outStart = _outEnd = 0;
        foreach (var stream in _waitingForLink)
        {
            stream.WaitingForLink = false;
            UpdateInterest(stream);
        }
        _waitingForLink.Clear();
        return true;
    }
}
