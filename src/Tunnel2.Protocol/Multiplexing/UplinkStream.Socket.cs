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
    public async Task CopyInputToAsync(Socket destination, CancellationToken cancellationToken)
    {
        Hold();
        try
        {
            PipeReader input = _inbound.Reader;
            while (true)
            {
                ReadResult result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
                ReadOnlySequence<byte> buffer = result.Buffer;
                long consumed = buffer.Length;
                try
                {
                    foreach (ReadOnlyMemory<byte> segment in buffer)
                    {
                        // A stream socket's send completes only once it has taken every byte.
                        await destination.SendAsync(segment, SocketFlags.None, cancellationToken).ConfigureAwait(false);
                    }
                }
                finally
                {
                    input.AdvanceTo(buffer.End);
                }

                OnInputConsumed(consumed);
                if (result.IsCompleted)
                {
                    return;
                }
            }
        }
        finally
        {
            Release();
        }
    }
}
