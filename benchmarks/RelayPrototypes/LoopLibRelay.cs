using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.RelayPrototypes;

/// <summary>
/// Design (a) rebuilt on the Tunnel2.Loops library (the `loop-lib` pair): <see cref="LoopRelay"/>'s algorithm, frames
/// and windows, with the library's EventLoop, LoopListener and LoopSocket in place of the prototype's own epoll code.
/// A caller's bytes are read straight into the link's buffer behind a header; the link is sent once per loop turn
/// (a turn-end handler); link data goes to its socket at once, and what that cannot take waits in the library's queue.
/// </summary>
internal sealed class LoopLibRelay : ILoopSocketHandler, ILoopListenerHandler, ILoopTurnEnd
{
    private readonly EventLoop _loop = new("relay");
    private readonly bool _entry;
    private readonly IPEndPoint? _target;
    private readonly Dictionary<uint, LoopLibStream> _byId = [];
    private readonly List<LoopLibStream> _waitingForLink = [];
    private LoopSocket _link = null!;
    private uint _nextId = 1;

    private byte[] _out = new byte[1 << 20];
    private int _outStart, _outEnd;
    private bool _linkBlocked, _flushDeferred;

    private readonly byte[] _in = new byte[256 * 1024];
    private readonly byte[] _header = new byte[Frame.HeaderSize];
    private int _headerLength;
    private LoopLibStream? _payloadStream;
    private int _payloadLeft;

    private LoopLibRelay(bool entry, Socket link, IPEndPoint? target, Socket? callers)
    {
        _entry = entry;
        _target = target;
        _loop.Post(() =>
        {
            _link = LoopSocket.Adopt(_loop, link, this);
            _link.SetNoDelay();
            if (callers is not null)
            {
                _ = new LoopListener(_loop, callers, this);
            }
        });
    }

    public static LoopLibRelay Entry(IPEndPoint listen, IPEndPoint link)
    {
        var callers = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        callers.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        callers.Bind(listen);
        callers.Listen(4096);
        using var linkListener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        linkListener.Bind(link);
        linkListener.Listen(1);
        return new LoopLibRelay(entry: true, linkListener.Accept(), target: null, callers);
    }

    public static LoopLibRelay Agent(IPEndPoint link, IPEndPoint target)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Connect(link);
        return new LoopLibRelay(entry: false, socket, target, callers: null);
    }

    /// <summary>Until the link ends.</summary>
    public void Run() => _loop.Stopped.GetAwaiter().GetResult();

    public void OnAccepted(LoopListener listener, int fd)
    {
        var stream = new LoopLibStream(this, _nextId++);
        stream.Socket = LoopSocket.Adopt(_loop, fd, stream, Frame.Window + Frame.MaxPayload);
        stream.Socket.SetNoDelay();
        _byId[stream.Id] = stream;
        AppendControl(FrameType.Open, stream.Id, 0);
    }

    private void OpenTarget(uint id)
    {
        var stream = new LoopLibStream(this, id);
        stream.Socket = LoopSocket.Connect(_loop, _target!, stream, out LoopError error, Frame.Window + Frame.MaxPayload);
        if (stream.Socket is null)
        {
            Console.Error.WriteLine($"cannot connect to {_target}: {error}");
            AppendControl(FrameType.Reset, id, 0);
            return;
        }
        _byId[id] = stream;
    }

    /// <summary>A caller's or target's bytes, read straight into the link's output buffer as data frames.</summary>
    public void ReadStream(LoopLibStream stream)
    {
        LoopSocket socket = stream.Socket!;
        for (int i = 0; i < 4 && stream.Credit > 0; i++)
        {
            if (_out.Length - _outEnd - Frame.HeaderSize < 4096)
            {
                stream.WaitingForLink = true;
                _waitingForLink.Add(stream);
                stream.UpdateReading();
                return;
            }
            int want = Math.Min(Math.Min(_out.Length - _outEnd - Frame.HeaderSize, Frame.MaxPayload), stream.Credit);
            ReceiveResult read = socket.Receive(_out.AsSpan(_outEnd + Frame.HeaderSize, want));
            switch (read.Status)
            {
                case ReceiveStatus.WouldBlock:
                    return;
                case ReceiveStatus.EndOfStream:
                    stream.LocalEof = true;
                    AppendControl(FrameType.Fin, stream.Id, 0);
                    MaybeRemove(stream);
                    return;
                case ReceiveStatus.Data:
                    break;
                default:
                    Fail(stream);
                    return;
            }
            Frame.Write(_out.AsSpan(_outEnd), FrameType.Data, stream.Id, read.Bytes);
            _outEnd += Frame.HeaderSize + read.Bytes;
            stream.Credit -= read.Bytes;
            DeferFlush();
            if (read.Bytes < want)
            {
                break;
            }
        }
        stream.UpdateReading();
    }

    public void OnReadable(LoopSocket socket)
    {
        for (int i = 0; i < 4; i++)
        {
            ReceiveResult read = socket.Receive(_in);
            if (read.Status == ReceiveStatus.WouldBlock)
            {
                return;
            }
            if (read.Status != ReceiveStatus.Data)
            {
                LinkGone("the link closed");
                return;
            }
            Parse(_in.AsSpan(0, read.Bytes));
            if (read.Bytes < _in.Length)
            {
                return;
            }
        }
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
            OnFrame(Frame.Read(_header));
        }
    }

    private void OnFrame((FrameType Type, uint Id, int Length) frame)
    {
        _byId.TryGetValue(frame.Id, out LoopLibStream? stream);
        switch (frame.Type)
        {
            case FrameType.Open when !_entry:
                OpenTarget(frame.Id);
                break;
            case FrameType.Data:
                _payloadStream = stream;
                _payloadLeft = frame.Length;
                break;
            case FrameType.Window when stream is not null:
                stream.Credit += frame.Length;
                stream.UpdateReading();
                break;
            case FrameType.Fin when stream is not null:
                stream.PeerFin = true;
                stream.Socket!.ShutdownWrite();
                MaybeRemove(stream);
                break;
            case FrameType.Reset when stream is not null:
                Fail(stream, tellPeer: false);
                break;
            default:
                break;
        }
    }

    /// <summary>Link data for a stream, sent to its socket now; what the socket cannot take waits in its queue.</summary>
    private void Deliver(LoopLibStream stream, ReadOnlySpan<byte> data)
    {
        if (stream.Removed)
        {
            return;
        }
        LoopSocket socket = stream.Socket!;
        int queuedBefore = socket.QueuedBytes;
        SendStatus status = socket.Send(data);
        if (status is SendStatus.Closed or SendStatus.Refused)
        {
            Fail(stream);
            return;
        }
        int queued = socket.QueuedBytes - queuedBefore;
        if (queued > 0)
        {
            stream.Draining += queued;
            socket.NotifyWhenDrained();
        }
        Delivered(stream, data.Length - queued);
    }

    public void Delivered(LoopLibStream stream, int bytes)
    {
        stream.Unacked += bytes;
        if (stream.Unacked >= Frame.WindowUpdateThreshold && !stream.Removed)
        {
            AppendControl(FrameType.Window, stream.Id, stream.Unacked);
            stream.Unacked = 0;
        }
    }

    /// <summary>A socket error, here or (a Reset frame) at the other side: the stream ends both ways at once.</summary>
    public void Fail(LoopLibStream stream, bool tellPeer = true)
    {
        if (stream.Removed)
        {
            return;
        }
        if (tellPeer)
        {
            AppendControl(FrameType.Reset, stream.Id, 0);
        }
        stream.Socket!.Close();
        Remove(stream);
    }

    private void MaybeRemove(LoopLibStream stream)
    {
        if (stream.LocalEof && stream.PeerFin && !stream.Removed)
        {
            stream.Socket!.CloseAfterDrain();
            Remove(stream);
        }
    }

    private void Remove(LoopLibStream stream)
    {
        stream.Removed = true;
        _byId.Remove(stream.Id);
    }

    private void AppendControl(FrameType type, uint id, int length)
    {
        if (_out.Length - _outEnd < Frame.HeaderSize)
        {
            Array.Resize(ref _out, _out.Length * 2);
        }
        Frame.Write(_out.AsSpan(_outEnd), type, id, length);
        _outEnd += Frame.HeaderSize;
        DeferFlush();
    }

    private void DeferFlush()
    {
        if (!_flushDeferred)
        {
            _flushDeferred = true;
            _loop.DeferToTurnEnd(this);
        }
    }

    /// <summary>End of a loop turn: what this turn framed goes out in one send.</summary>
    public void OnTurnEnd()
    {
        _flushDeferred = false;
        if (_outEnd == _outStart || _linkBlocked)
        {
            return;
        }
        int sent = _link.SendSome(_out.AsSpan(_outStart, _outEnd - _outStart));
        if (sent < 0)
        {
            LinkGone("the link failed");
            return;
        }
        _outStart += sent;
        if (_outStart < _outEnd)
        {
            _linkBlocked = true;   // the library calls OnWritable when the link can take more
            return;
        }
        _outStart = _outEnd = 0;
        foreach (LoopLibStream stream in _waitingForLink)
        {
            stream.WaitingForLink = false;
            stream.UpdateReading();
        }
        _waitingForLink.Clear();
    }

    /// <summary>The link can take more: send the rest this turn.</summary>
    public void OnWritable(LoopSocket socket)
    {
        _linkBlocked = false;
        DeferFlush();
    }

    public void OnClosed(LoopSocket socket, LoopError reason) => LinkGone($"the link failed: {reason}");

    private void LinkGone(string why)
    {
        Console.Error.WriteLine(why);
        _loop.Dispose();
    }
}
