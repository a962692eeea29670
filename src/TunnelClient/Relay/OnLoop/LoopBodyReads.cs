using System.Runtime.CompilerServices;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Relay.OnLoop;

/// <summary>
/// A response body of known length (or one that runs until the backend closes) read on the client's event loop, for a
/// backend connection there (<see cref="LoopSocketStream"/>): up to 1 MiB per read, straight into four pooled frame
/// buffers with one readv, queued as 256 KiB Data frames on the loop, with no pipe, no pool worker and no post per
/// frame. Out of credit, it waits for the peer's grant on the loop (<see cref="LoopCreditWait"/>); when the backend
/// has nothing yet, for the loop's readiness. The relay-pair prototypes spent ~225–250 µs per MB in this process with
/// 1 MiB reads against ~355 with 256 KiB ones (docs/benchmarks/2026-11-29-download-splice.md).
/// </summary>
internal static class LoopBodyReads
{
    /// <summary>Frames filled per read: four of <c>UplinkSettings.DataChunkSize</c> (256 KiB by default), 1 MiB.</summary>
    private const int FramesPerRead = 4;

    private static readonly ScatterFill<LoopSocketStream> Fill = static (buffers, source) => source.ReceiveNow(buffers);

    /// <summary>Sends the next bytes of the body, at most <paramref name="limit"/>, once there are bytes and credit for them.</summary>
    /// <param name="endAtLimit">When the bytes reach <paramref name="limit"/>, the last frame ends the stream.</param>
    /// <returns>
    /// Bytes sent; 0 at the backend's end (nothing sent); -1 when the next frame must take the general path: off the
    /// loop, the uplink's queued-data budget full (the turn is waited for there), or the stream failed (thrown there).
    /// </returns>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public static async ValueTask<int> SendAsync(IStreamHandle stream, LoopSocketStream source, long limit, bool endAtLimit, CancellationToken cancellationToken)
    {
        while (source.IsOnItsLoop)
        {
            switch (stream.TrySendFramesNow(Fill, source, limit, endAtLimit, FramesPerRead, out int sent))
            {
                case SendNowStatus.Sent:
                    return sent;
                case SendNowStatus.Ended:
                    return 0;
                case SendNowStatus.WouldBlock:
                    // Completed by the loop when the backend has bytes (or its end), inline: the next read is on the loop.
                    _ = await source.ReadAsync(Memory<byte>.Empty, cancellationToken);
                    break;
                case SendNowStatus.NoCredit when !stream.IsAborted:
                    await source.CreditWait.WaitAsync(stream);
                    break;
                default:
                    return -1;
            }
        }

        return -1;
    }
}
