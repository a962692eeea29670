using System.Net;

namespace Tunnel2.RelayPrototypes;

/// <summary>
/// Design (b) on design (a)'s loop: rathole's data connection per caller from a pre-dialled pool, relayed by one thread
/// per process on its own epoll set with splice(2) (socket → pipe → socket), so that no byte is copied in user space.
/// The agent keeps <see cref="PoolSize"/> data connections dialled to the entry; the entry writes one start byte on an
/// idle one for each caller, upon which the agent dials the target and a replacement.
/// </summary>
internal sealed class SpliceRelay
{
    private const int PoolSize = 8;
    private const int PipeSize = 256 * 1024;

    /// <summary>One direction of a pair: bytes read from <see cref="From"/> wait in a pipe until <see cref="To"/> takes them.</summary>
    private sealed class Direction(Side from, Side to)
    {
        public readonly Side From = from, To = to;
        public readonly (int Read, int Write) Pipe = Native.Pipe(PipeSize);
        public int InPipe;
        public bool Eof, Shut;
    }

    private sealed class Side(int fd, bool connected)
    {
        public readonly int Fd = fd;
        public bool Connected = connected;
        public Direction Out = null!, In = null!;
        public int Interest = -1;
        public bool Closed;
    }

    private enum Role { Caller, IdleData, Relay }

    private readonly int _epoll = Native.epoll_create1(0);
    private readonly IPEndPoint? _link, _target;   // the agent's
    private readonly int _callers = -1, _dataListener = -1;   // the entry's
    private readonly Queue<int> _idleData = new(), _waitingCallers = new();
    private readonly Dictionary<int, Side> _sides = [];
    private readonly HashSet<int> _pooled = [];   // the agent's idle data connections

    private SpliceRelay(int callers, int dataListener, IPEndPoint? link, IPEndPoint? target)
    {
        (_callers, _dataListener, _link, _target) = (callers, dataListener, link, target);
    }

    public static SpliceRelay Entry(IPEndPoint listen, IPEndPoint link)
    {
        var relay = new SpliceRelay(Native.Listen(listen), Native.Listen(link), null, null);
        Native.Control(relay._epoll, Native.EpollCtlAdd, relay._callers, Native.EpollIn);
        Native.Control(relay._epoll, Native.EpollCtlAdd, relay._dataListener, Native.EpollIn);
        return relay;
    }

    public static SpliceRelay Agent(IPEndPoint link, IPEndPoint target)
    {
        var relay = new SpliceRelay(-1, -1, link, target);
        for (int i = 0; i < PoolSize; i++)
        {
            relay.DialData();
        }
        return relay;
    }

    public unsafe void Run()
    {
        const int MaxEvents = 256;
        Native.EpollEvent* events = stackalloc Native.EpollEvent[MaxEvents];
        while (true)
        {
            int count = Native.epoll_wait(_epoll, events, MaxEvents, -1);
            for (int i = 0; i < count; i++)
            {
                int fd = (int)events[i].Data, ready = (int)events[i].Events;
                if (fd == _callers)
                {
                    AcceptCallers();
                }
                else if (fd == _dataListener)
                {
                    AcceptData();
                }
                else if (_pooled.Contains(fd))
                {
                    OnPooled(fd);
                }
                else if (_sides.TryGetValue(fd, out var side))
                {
                    OnSide(side, ready);
                }
            }
        }
    }

    // The entry: callers wait for idle data connections and the other way round.
    private void AcceptCallers()
    {
        int fd;
        while ((fd = Native.Accept(_callers)) >= 0)
        {
            _waitingCallers.Enqueue(fd);
        }
        MatchCallers();
    }

    private void AcceptData()
    {
        int fd;
        while ((fd = Native.Accept(_dataListener)) >= 0)
        {
            _idleData.Enqueue(fd);
        }
        MatchCallers();
    }

    private void MatchCallers()
    {
        while (_waitingCallers.Count > 0 && _idleData.Count > 0)
        {
            int caller = _waitingCallers.Dequeue(), data = _idleData.Dequeue();
            if (Native.Send(data, [1]) != 1)
            {
                Native.close(data);
                _waitingCallers.Enqueue(caller);   // try the next idle one
                continue;
            }
            StartPair(new Side(caller, connected: true), new Side(data, connected: true));
        }
    }

    // The agent: a pooled connection waits for its start byte, then the target is dialled.
    private void DialData()
    {
        int fd = Native.Connect(_link!);
        _pooled.Add(fd);
        Native.Control(_epoll, Native.EpollCtlAdd, fd, Native.EpollIn);
    }

    private void OnPooled(int fd)
    {
        Span<byte> start = stackalloc byte[1];
        int n = Native.Recv(fd, start);
        if (n == -1)
        {
            return;
        }
        _pooled.Remove(fd);
        Native.Control(_epoll, Native.EpollCtlDel, fd, 0);
        DialData();   // the replacement
        if (n != 1)
        {
            Native.close(fd);
            return;
        }
        int target;
        try
        {
            target = Native.Connect(_target!);
        }
        catch (InvalidOperationException e)
        {
            Console.Error.WriteLine(e.Message);
            Native.close(fd);
            return;
        }
        StartPair(new Side(fd, connected: true), new Side(target, connected: false));
    }

    private void StartPair(Side a, Side b)
    {
        a.Out = b.In = new Direction(a, b);
        b.Out = a.In = new Direction(b, a);
        _sides[a.Fd] = a;
        _sides[b.Fd] = b;
        UpdateInterest(a);
        UpdateInterest(b);
    }

    private void OnSide(Side side, int ready)
    {
        bool connectedNow = false;
        if (!side.Connected && (ready & (Native.EpollOut | Native.EpollErr | Native.EpollHup)) != 0)
        {
            if (Native.SocketError(side.Fd) != 0)
            {
                Close(side);
                return;
            }
            side.Connected = connectedNow = true;
        }
        if ((ready & Native.EpollErr) != 0)
        {
            Close(side);
            return;
        }
        // Readable: this side's bytes go out; writable: the other side's go in (each pump reads its source itself).
        bool readable = (ready & (Native.EpollIn | Native.EpollHup)) != 0, writable = (ready & Native.EpollOut) != 0;
        if (((readable || connectedNow) && !Pump(side.Out)) || ((writable || connectedNow) && !Pump(side.In)))
        {
            Close(side);
            return;
        }
        if (side.Out.Shut && side.In.Shut)
        {
            Close(side);
            return;
        }
        UpdateInterest(side);
        UpdateInterest(side.Out.To);
    }

    /// <summary>Moves what can move now: pipe → destination, then source → pipe. false on a socket error.</summary>
    private static bool Pump(Direction d)
    {
        if (!d.From.Connected || !d.To.Connected)
        {
            return true;
        }
        bool drained = false;   // the last read was short: the source is empty for now
        for (int i = 0; i < 8; i++)
        {
            if (d.InPipe > 0)
            {
                int sent = Native.Splice(d.Pipe.Read, d.To.Fd, d.InPipe);
                if (sent == -2)
                {
                    return false;
                }
                if (sent == -1)
                {
                    return true;   // the destination is full: EPOLLOUT
                }
                d.InPipe -= sent;
                if (d.InPipe > 0)
                {
                    continue;
                }
            }
            if (drained)
            {
                return true;
            }
            if (d.Eof)
            {
                if (!d.Shut)
                {
                    Native.ShutdownWrite(d.To.Fd);
                    d.Shut = true;
                }
                return true;
            }
            int read = Native.Splice(d.From.Fd, d.Pipe.Write, PipeSize);
            if (read == -2)
            {
                return false;
            }
            if (read == -1)
            {
                return true;
            }
            if (read == 0)
            {
                d.Eof = true;
            }
            d.InPipe += read;
            drained = read > 0 && read < PipeSize;
        }
        return true;
    }

    private void UpdateInterest(Side side)
    {
        if (side.Closed)
        {
            return;
        }
        int want = 0;
        if (!side.Connected || side.In.InPipe > 0)
        {
            want |= Native.EpollOut;
        }
        if (side.Connected && side.Out.To.Connected && !side.Out.Eof && side.Out.InPipe == 0)
        {
            want |= Native.EpollIn;
        }
        if (want == side.Interest)
        {
            return;
        }
        int op = side.Interest == -1 ? Native.EpollCtlAdd : Native.EpollCtlMod;
        Native.Control(_epoll, op, side.Fd, want);
        side.Interest = want;
    }

    /// <summary>Ends the pair both ways: both sockets and both pipes.</summary>
    private void Close(Side side)
    {
        foreach (var s in new[] { side, side.Out.To })
        {
            if (!s.Closed)
            {
                s.Closed = true;
                _sides.Remove(s.Fd);
                Native.close(s.Fd);
            }
        }
        foreach (var d in new[] { side.Out, side.In })
        {
            Native.close(d.Pipe.Read);
            Native.close(d.Pipe.Write);
        }
    }
}
