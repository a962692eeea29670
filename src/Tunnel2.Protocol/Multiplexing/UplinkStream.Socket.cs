using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>The receiving half of the TCP relays: the peer's bytes straight from the stream's inbound buffer into a socket.</summary>
public sealed partial class UplinkStream
{
    /// <summary>
    /// Copies the peer's body into <paramref name="destination"/> as <see cref="CopyInputToAsync(PipeWriter, bool, CancellationToken)"/>
    /// does, but sends the inbound buffer's own segments, with no write buffer (and no copy) of its own in between. Credit
    /// goes back once the socket has taken the bytes, so a caller or target that stops reading holds its stream's window.
    /// The socket is not shut down at the end; the relay passes the END_STREAM on as it sees fit.
    /// </summary>
    /// <exception cref="StreamResetException">The peer reset the stream mid-body.</exception>
    /// <exception cref="UplinkClosedException">The uplink died mid-body.</exception>
    /// <exception cref="SocketException">The socket stopped taking the body.</exception>
    public Task CopyInputToAsync(Socket destination, CancellationToken cancellationToken) =>
        CopyInputAsync(new SocketDestination(destination), cancellationToken);

    private readonly struct SocketDestination(Socket socket) : IInboundDestination
    {
        public async ValueTask WriteAsync(ReadOnlySequence<byte> buffer, CancellationToken cancellationToken)
        {
            foreach (ReadOnlyMemory<byte> segment in buffer)
            {
                // A stream socket's send completes only once it has taken every byte.
                await socket.SendAsync(segment, SocketFlags.None, cancellationToken).ConfigureAwait(false);
            }
        }
    }
}
