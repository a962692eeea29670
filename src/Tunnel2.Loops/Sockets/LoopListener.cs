using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops.Interop;

namespace Tunnel2.Loops.Sockets;

/// <summary>A listening socket in a loop: accepts (accept4, non-blocking) as connections arrive, a batch per turn.</summary>
public sealed class LoopListener : ILoopHandler, IDisposable
{
    private const int AcceptsPerTurn = 64;
    private static readonly TimeSpan PauseAfterFailure = TimeSpan.FromMilliseconds(100);

    private readonly EventLoop _loop;
    private readonly Socket _socket;
    private readonly ILoopListenerHandler _handler;
    private readonly bool _peerAddresses;
    private LoopRegistration _registration;

    /// <summary>On the loop; <paramref name="listening"/> is bound and listening, and is disposed with this listener.</summary>
    /// <param name="peerAddresses">Whether accept4 reads each caller's address for the handler's
    /// <see cref="ILoopListenerHandler.OnAccepted(LoopListener, int, IPEndPoint?)"/> (one small allocation per connection).</param>
    public LoopListener(EventLoop loop, Socket listening, ILoopListenerHandler handler, bool peerAddresses = false)
    {
        _loop = loop;
        _socket = listening;
        _handler = handler;
        _peerAddresses = peerAddresses;
        _socket.Blocking = false;
        Fd = (int)_socket.SafeHandle.DangerousGetHandle();
        _registration = loop.Register(Fd, this, LoopReadiness.Read);
    }

    public int Fd { get; }

    public void OnReady(LoopReadiness ready)
    {
        for (int i = 0; i < AcceptsPerTurn && _registration.IsRegistered; i++)
        {
            int fd = _peerAddresses ? AcceptWithPeer() : SocketCalls.Accept(Fd);
            if (fd >= 0)
            {
                if (!_peerAddresses)
                {
                    _handler.OnAccepted(this, fd);
                }
                continue;
            }
            if (fd != -LibC.EAgain && fd != -103 /* ECONNABORTED: that caller is gone, the next may be there */)
            {
                _handler.OnAcceptFailed(this, LoopError.FromErrno(-fd));
                Pause();
            }
            if (fd != -103)
            {
                return;
            }
        }
    }

    public void OnLoopStopping() => Dispose();

    private int AcceptWithPeer()
    {
        Span<byte> address = stackalloc byte[28];
        int fd = SocketCalls.Accept(Fd, address, out int length);
        if (fd >= 0)
        {
            _handler.OnAccepted(this, fd, SocketAddresses.Read(address[..Math.Min(length, address.Length)]));
        }
        return fd;
    }

    public void Dispose()
    {
        if (_registration.IsRegistered)
        {
            _loop.Unregister(_registration);
            _registration = default;
        }
        _socket.Dispose();
    }

    private void Pause()
    {
        _loop.Modify(_registration, LoopReadiness.None);
        _loop.Schedule(PauseAfterFailure, static state =>
        {
            var listener = (LoopListener)state!;
            if (listener._registration.IsRegistered)
            {
                listener._loop.Modify(listener._registration, LoopReadiness.Read);
            }
        }, this);
    }
}
