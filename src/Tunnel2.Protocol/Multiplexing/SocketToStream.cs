using System.Net.Sockets;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The sending half of both TCP relays (the server's caller, the client's target): what the socket receives goes out as
/// Data frames of the stream, read straight into each frame's pooled buffer, as much per read as the stream's credit
/// allows (up to a whole frame). A bulk transfer so costs one read and one frame per credit-sized block and no copy
/// before the writer's; a small message one read and one frame of its own size. The socket's FIN ends the stream's
/// sending side (a half-close); a failed read fails the returned task, and the relay decides what that means.
/// </summary>
public static class SocketToStream
{
    /// <summary>The read (and frame buffer) of a small message; a larger one that arrives in pieces still goes out in few frames.</summary>
    private const int MinimumRead = 16 * 1024;

    public static async Task PumpAsync(Socket source, IByteStream stream)
    {
        while (true)
        {
            // Wait for bytes (or the FIN) without a buffer: an idle connection holds none, and the socket's cached read
            // arguments let go of the last frame's buffer, which is the writer's (and then the pool's) by now.
            await source.ReceiveAsync(Memory<byte>.Empty, SocketFlags.None).ConfigureAwait(false);

            // A small message rents a small array, not a whole frame's; when more than that waits (a bulk transfer),
            // the read takes all the credit allows, up to a frame.
            int sent = await stream.SendFrameAsync(
                static (buffer, socket, token) => socket.ReceiveAsync(buffer, SocketFlags.None, token),
                static (socket, token) => WaitForDataAsync(socket, token),
                source,
                limit: source.Available > MinimumRead ? long.MaxValue : MinimumRead,
                endAtLimit: false,
                CancellationToken.None).ConfigureAwait(false);
            if (sent == 0)
            {
                stream.SendEnd();
                return;
            }
        }
    }

    /// <summary>Completes once a read would return at once: the socket has bytes, or its end.</summary>
    private static async ValueTask WaitForDataAsync(Socket socket, CancellationToken cancellationToken) =>
        await socket.ReceiveAsync(Memory<byte>.Empty, SocketFlags.None, cancellationToken).ConfigureAwait(false);
}
