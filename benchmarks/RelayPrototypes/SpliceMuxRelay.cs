using System.Net;
using System.Net.Sockets;

namespace Tunnel2.RelayPrototypes;

/// <summary>
/// Design (a) with payloads moved by splice(2) (docs/benchmarks/2026-11-29-download-splice.md): the same one thread,
/// epoll set, frames and windows as <see cref="LoopRelay"/>, but no payload byte passes through user space. Sending, a
/// caller's or target's bytes are spliced into the send pipe, their frame header goes on the link (MSG_MORE) and the pipe
/// is spliced after it; control frames framed meanwhile wait in a second buffer, so that nothing cuts into a payload.
/// Receiving, a header is read alone (9 bytes), its payload spliced from the link into the receive pipe and from there
/// to the stream's socket. What that socket cannot take stays in the pipe, and the link is not read until it has gone:
/// head-of-line blocking across streams, which a build into Tunnel2 would replace by a pipe per stream sized to its
/// window (a splice into a full pipe and one from an empty socket both say EAGAIN, so a shared pipe must be empty).
/// </summary>
internal sealed class SpliceMuxRelay
{
    private const int PipeSize = 1 << 20;

    private sealed class Stream(uint id, int fd, bool connected)
    {
        public readonly uint Id = id;
        public readonly int Fd = fd;
        public bool Connected = connected;      // the agent's target connect has completed
        public int Credit = Frame.Window;       // bytes this side may still send on the link
        public int Unacked;                     // bytes handed to Fd and not yet returned as credit
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

    // Sending: _out (control frames, then the header of the payload in the send pipe), the pipe, then _later.
    private byte[] _out = new byte[64 * 1024], _later = new byte[64 * 1024];
    private int _outStart, _outEnd, _laterEnd;
    private readonly (int Read, int Write) _sendPipe = Native.Pipe(PipeSize);
    private int _sendPiped;
    private bool _linkBlocked, _linkGone;

    // Receiving: one header at a time, its payload through the receive pipe.
    private readonly byte[] _header = new byte[Frame.HeaderSize];
    private readonly byte[] _scratch = new byte[64 * 1024];   // payloads of streams already gone
    private int _headerLength;
    private Stream? _payloadStream;
    private int _payloadLeft;
    private (int Read, int Write) _recvPipe = Native.Pipe(PipeSize);
    private int _recvPiped;
    private Stream? _pipeOwner;                 // whose bytes are in the receive pipe; the link is not read meanwhile
    private int _linkInterest;

    private SpliceMuxRelay(bool entry, Socket link, IPEndPoint? target, int callers)
    {
        _entry = entry;
        _target = target;
        _callers = callers;
        _linkSocket = link;
        _linkSocket.Blocking = false;
        _link = (int)_linkSocket.SafeHandle.DangerousGetHandle();
        Native.Tune(_link);
        _linkInterest = Native.EpollIn;
        Native.Control(_epoll, Native.EpollCtlAdd, _link, Native.EpollIn);
        if (_callers >= 0)
        {
            Native.Control(_epoll, Native.EpollCtlAdd, _callers, Native.EpollIn);
        }
    }

    public static SpliceMuxRelay Entry(IPEndPoint listen, IPEndPoint link)
    {
        int callers = Native.Listen(listen);
        using var linkListener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        linkListener.Bind(link);
        linkListener.Listen(1);
        return new SpliceMuxRelay(entry: true, linkListener.Accept(), target: null, callers);
    }

    public static SpliceMuxRelay Agent(IPEndPoint link, IPEndPoint target)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Connect(link);
        return new SpliceMuxRelay(entry: false, socket, target, callers: -1);
    }

    public unsafe void Run()
    {
        const int MaxEvents = 256;
        Native.EpollEvent* events = stackalloc Native.EpollEvent[MaxEvents];
        while (!_linkGone)
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
            for (int i = 0; i < count && !_linkGone; i++)
            {
                int fd = (int)events[i].Data, ready = (int)events[i].Events;
                if (fd == _link)
                {
                    _linkBlocked &= (ready & Native.EpollOut) == 0;
                    if ((ready & ~Native.EpollOut) != 0 && _pipeOwner is null)
                    {
                        ReadLink();
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
            Flush();
            UpdateLinkInterest();
        }
        Console.Error.WriteLine("the link closed or failed");
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

    /// <summary>A caller's or target's bytes: spliced into the send pipe, framed, and sent on at once.</summary>
    private void ReadStream(Stream stream)
    {
        for (int i = 0; i < 4 && stream.Credit > 0; i++)
        {
            if (_sendPiped > 0 || _linkBlocked)
            {
                if (!stream.WaitingForLink)
                {
                    stream.WaitingForLink = true;
                    _waitingForLink.Add(stream);
                }
                return;
            }
            int want = Math.Min(Frame.MaxPayload, stream.Credit);
            int n = Native.Splice(stream.Fd, _sendPipe.Write, want);
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
            AppendControl(FrameType.Data, stream.Id, n);
            _sendPiped = n;
            stream.Credit -= n;
            Flush();
            if (n < want)
            {
                return;
            }
        }
    }

    /// <summary>Frames from the link, until it has nothing more or a stream's socket cannot take a payload.</summary>
    private void ReadLink()
    {
        for (int i = 0; i < 16 && _pipeOwner is null && !_linkGone; i++)
        {
            int n;
            if (_payloadLeft > 0)
            {
                n = _payloadStream is { Dead: false } stream ? SpliceIn(stream) : Discard();
            }
            else
            {
                n = Native.Recv(_link, _header.AsSpan(_headerLength));
                if (n > 0 && (_headerLength += n) == Frame.HeaderSize)
                {
                    _headerLength = 0;
                    OnFrame();
                }
            }
            if (n == -1)
            {
                return;
            }
            if (n <= 0)
            {
                _linkGone = true;
            }
        }
    }

    private int SpliceIn(Stream stream)
    {
        int n = Native.Splice(_link, _recvPipe.Write, Math.Min(_payloadLeft, PipeSize));
        if (n > 0)
        {
            _payloadLeft -= n;
            _recvPiped = n;
            _pipeOwner = stream;
            if (stream.Connected)
            {
                DrainPipe(stream);
            }
            UpdateInterest(stream);
        }
        return n;
    }

    private int Discard()
    {
        int n = Native.Recv(_link, _scratch.AsSpan(0, Math.Min(_payloadLeft, _scratch.Length)));
        if (n > 0)
        {
            _payloadLeft -= n;
        }
        return n;
    }

    private void OnFrame()
    {
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

    private void Delivered(Stream stream, int bytes)
    {
        stream.Unacked += bytes;
        if (stream.Unacked >= Frame.WindowUpdateThreshold)
        {
            AppendControl(FrameType.Window, stream.Id, stream.Unacked);
            stream.Unacked = 0;
        }
    }

    /// <summary>EPOLLOUT: a connect's completion, then the receive pipe.</summary>
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
        DrainPipe(stream);
    }

    /// <summary>The receive pipe to the stream's socket, as far as the socket takes it.</summary>
    private void DrainPipe(Stream stream)
    {
        while (_pipeOwner == stream)
        {
            int n = Native.Splice(_recvPipe.Read, stream.Fd, _recvPiped);
            if (n == -1)
            {
                return;
            }
            if (n <= 0)
            {
                Fail(stream);
                return;
            }
            Delivered(stream, n);
            if ((_recvPiped -= n) == 0)
            {
                _pipeOwner = null;   // the link may be read again
            }
        }
        ShutWhenDrained(stream);
    }

    private void ShutWhenDrained(Stream stream)
    {
        if (stream.PeerFin && !stream.WriteShut && !stream.Dead && stream.Connected && _pipeOwner != stream)
        {
            Native.ShutdownWrite(stream.Fd);
            stream.WriteShut = true;
        }
    }

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
        if (_pipeOwner == stream)
        {
            // its bytes cannot be taken back out of the pipe without a copy: a new pipe instead
            Native.close(_recvPipe.Read);
            Native.close(_recvPipe.Write);
            _recvPipe = Native.Pipe(PipeSize);
            _recvPiped = 0;
            _pipeOwner = null;
        }
        _byFd.Remove(stream.Fd);
        Native.close(stream.Fd);
        MaybeRemove(stream);
    }

    private void MaybeRemove(Stream stream)
    {
        if (!stream.LocalEof || !stream.PeerFin || (!stream.Dead && (_pipeOwner == stream || !stream.WriteShut)))
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
        if (!stream.Connected || _pipeOwner == stream)
        {
            want |= Native.EpollOut;
        }
        if (want == 0 && (stream.Hup || stream.LocalEof))
        {
            want = -1;
        }
        if (want == stream.Interest)
        {
            return;
        }
        int op = stream.Interest == -1 ? Native.EpollCtlAdd : want == -1 ? Native.EpollCtlDel : Native.EpollCtlMod;
        Native.Control(_epoll, op, stream.Fd, Math.Max(want, 0));
        stream.Interest = want;
    }

    /// <summary>The link is read unless the receive pipe holds a payload; written to when a send would block.</summary>
    private void UpdateLinkInterest()
    {
        int want = (_pipeOwner is null ? Native.EpollIn : 0) | (_linkBlocked ? Native.EpollOut : 0);
        if (want != _linkInterest)
        {
            Native.Control(_epoll, Native.EpollCtlMod, _link, want);
            _linkInterest = want;
        }
    }

    /// <summary>A control frame or a data frame's header: behind the payload in the send pipe when there is one.</summary>
    private void AppendControl(FrameType type, uint id, int length)
    {
        ref byte[] buffer = ref _sendPiped > 0 ? ref _later : ref _out;
        ref int end = ref _sendPiped > 0 ? ref _laterEnd : ref _outEnd;
        if (buffer.Length - end < Frame.HeaderSize)
        {
            Array.Resize(ref buffer, buffer.Length * 2);
        }
        Frame.Write(buffer.AsSpan(end), type, id, length);
        end += Frame.HeaderSize;
    }

    /// <summary>_out, then the send pipe, then what was framed behind it, as far as the link takes them.</summary>
    private void Flush()
    {
        while (!_linkBlocked && !_linkGone)
        {
            if (_outEnd > _outStart)
            {
                int sent = Native.Send(_link, _out.AsSpan(_outStart, _outEnd - _outStart), more: _sendPiped > 0);
                if (sent < 0)
                {
                    _linkGone = true;
                    return;
                }
                _outStart += sent;
                if (_outStart < _outEnd)
                {
                    _linkBlocked = true;
                    return;
                }
                _outStart = _outEnd = 0;
            }
            if (_sendPiped > 0)
            {
                int n = Native.Splice(_sendPipe.Read, _link, _sendPiped);
                if (n == -2 || n == 0)
                {
                    _linkGone = true;
                    return;
                }
                if (n == -1 || (_sendPiped -= n) > 0)
                {
                    _linkBlocked = true;
                    return;
                }
                (_out, _later) = (_later, _out);
                (_outEnd, _laterEnd) = (_laterEnd, 0);
                continue;
            }
            break;
        }
        if (!_linkBlocked && _waitingForLink.Count > 0)
        {
            foreach (var stream in _waitingForLink)
            {
                stream.WaitingForLink = false;
                UpdateInterest(stream);
            }
            _waitingForLink.Clear();
        }
    }
}
