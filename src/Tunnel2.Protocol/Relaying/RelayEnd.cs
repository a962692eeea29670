using System.IO.Pipelines;
using System.Net.Sockets;

namespace Tunnel2.Protocol.Relaying;

/// <summary>
/// The local connection of a <see cref="DuplexRelay"/>, described rather than wrapped (no allocation): a socket, moved
/// with no buffer of the relay's own (<see cref="Multiplexing.SocketToStream"/> one way, the inbound buffer's segments
/// the other), or a byte stream (an upgraded connection, TLS or not), read straight into Data frames.
/// </summary>
public readonly struct RelayEnd
{
    private RelayEnd(Socket? socket, Stream? stream, Socket? halfClose, PipeReader? buffered)
    {
        Socket = socket;
        Stream = stream;
        HalfClose = halfClose;
        Buffered = buffered;
    }

    /// <summary>The socket, when the end is one.</summary>
    public Socket? Socket { get; }

    /// <summary>The byte stream, when the end is one.</summary>
    public Stream? Stream { get; }

    /// <summary>The socket whose sending side the tunnel's end shuts (a half-close); null when the end cannot be half-closed.</summary>
    public Socket? HalfClose { get; }

    /// <summary>Bytes a head's read already took from the stream past the head: sent first.</summary>
    public PipeReader? Buffered { get; }

    /// <summary>
    /// The tunnel's end can be passed on while the local side still sends. When it cannot, the tunnel's end ends the
    /// relay: Kestrel cannot half-close an upgraded connection, and YARP ends an upgrade so too.
    /// </summary>
    public bool CanHalfClose => HalfClose is not null;

    /// <summary>
    /// A TCP connection: the tunnel's END_STREAM shuts its sending side, and a failure either way closes it with a reset
    /// (linger 0), so its peer sees a cut rather than a clean end.
    /// </summary>
    public static RelayEnd OfSocket(Socket socket) => new(socket, null, socket, null);

    /// <summary>A byte stream; the owner cuts it on a failure (through the result, or the stream's abort listener).</summary>
    /// <param name="halfClose">The socket under the stream, whose sending side the tunnel's END_STREAM shuts; null: no half-close.</param>
    /// <param name="buffered">What a head's read took in past the head, sent before the stream's own bytes.</param>
    public static RelayEnd OfStream(Stream stream, Socket? halfClose = null, PipeReader? buffered = null) => new(null, stream, halfClose, buffered);

    /// <summary>Closes a socket with a reset (linger 0): its peer sees the connection cut, not ended.</summary>
    public static void Reset(Socket socket)
    {
        try
        {
            socket.LingerState = new LingerOption(true, 0);
            socket.Close();
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            // already closed
        }
    }
}
