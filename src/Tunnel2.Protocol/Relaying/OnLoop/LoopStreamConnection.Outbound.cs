using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Buffers;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.Protocol.Relaying.OnLoop;

/// <summary>
/// The socket's bytes to the peer, on the loop: each read goes into a buffer of the frames' pool (<see cref="DataBufferPool"/>) as large as the stream's credit
/// allows: <see cref="IByteStream.WaitingReadSize"/> (16 KiB) at first, so a small message rents a small buffer and a
/// crowd of quiet connections holds little, and a whole frame (<see cref="UplinkSettings.DataChunkSize"/>) after a read
/// that filled its buffer (a bulk transfer), as <see cref="IByteStream.SendStreamAsync"/> does. It becomes a Data frame
/// queued for the uplink's writer with no copy. Out of credit, reading pauses until the peer grants more
/// (<see cref="OnSendCredit"/>). An idle connection holds no buffer.
/// </summary>
public abstract partial class LoopStreamConnection : ISendCreditListener
{
    /// <summary>Reads of one connection per readiness, so one busy socket does not hold the loop from the others.</summary>
    private const int ReadsPerTurn = 4;

    private static readonly Action<object?> ResumeOnLoop = static state => ((LoopStreamConnection)state!).ResumeReading();
    private static readonly Action<object?> EndSentOnLoop = static state => ((LoopStreamConnection)state!).OnEndSent();

    private bool _socketEnded;
    private bool _endSent;
    private bool _waitingForCredit;
    private long _fromSocket;

    /// <summary>The last read filled its buffer: more is waiting, so the next one takes a whole frame's worth.</summary>
    private bool _bulk;

    public void OnReadable(LoopSocket socket)
    {
        for (int reads = 0; reads < ReadsPerTurn && !_finished; reads++)
        {
            int credit = Stream.TryTakeSendCredit(_bulk ? Stream.Uplink.Settings.DataChunkSize : IByteStream.WaitingReadSize);
            if (credit == 0)
            {
                socket.ReadPaused = true;
                _waitingForCredit = true;
                Stream.NotifyOnSendCredit(this);
                return;
            }

            // From the frames' pool, where the uplink's writer gives the buffer back once the frame is written: rented
            // from the runtime's shared pool instead, every read was a new array (that pool never got one back).
            byte[] pooled = DataBufferPool.Shared.Rent(credit);
            ReceiveResult read = socket.Receive(pooled.AsSpan(0, credit));
            if (read.Status == ReceiveStatus.Data)
            {
                Stream.ReturnUnusedSendCredit(credit - read.Bytes);
                _fromSocket += read.Bytes;
                _bulk = read.Bytes == credit;
                // A short read took all there was: no second read just to hear EAGAIN (level-triggered, the loop
                // calls again when more comes).
                if (!TrySend(pooled, read.Bytes) || read.Bytes < credit)
                {
                    return;
                }

                continue;
            }

            DataBufferPool.Shared.Return(pooled);
            Stream.ReturnUnusedSendCredit(credit);
            OnReadEnded(read);
            return;
        }
    }

    /// <summary>The peer granted credit (or the stream failed): from the granting thread.</summary>
    public void OnSendCredit() => Loop.Post(ResumeOnLoop, this);

    private void ResumeReading()
    {
        if (_waitingForCredit && !_finished && _socket is { IsClosed: false } socket)
        {
            _waitingForCredit = false;
            socket.ReadPaused = false;
        }
    }

    private bool TrySend(byte[] pooled, int length)
    {
        try
        {
            Stream.SendPooled(pooled, length);
            return true;
        }
        catch (Exception ex) when (ex is StreamResetException or UplinkClosedException or InvalidOperationException)
        {
            // The stream was reset or the uplink died meanwhile: the abort listener ends the connection.
            return false;
        }
    }

    private void OnReadEnded(in ReceiveResult read)
    {
        switch (read.Status)
        {
            case ReceiveStatus.EndOfStream:
                _socketEnded = true;
                // Off the loop: the stream's last frame may be written inline to the uplink, which may log if it fails.
                OffLoop(static c => c.SendEnd(), this);
                break;
            case ReceiveStatus.Failed:
                SocketFailed(read.Error);
                break;
        }
    }

    /// <summary>Off the loop: the socket's FIN goes to the peer as END_STREAM, then the loop hears of it.</summary>
    private void SendEnd()
    {
        try
        {
            Stream.TrySendEnd();
        }
        catch (UplinkClosedException)
        {
            // The abort listener ends the connection.
        }

        Loop.Post(EndSentOnLoop, this);
    }

    private void OnEndSent()
    {
        _endSent = true;
        if (_finished)
        {
            LetGo(); // the end came while the END_STREAM was being sent
            return;
        }

        EndIfDone();
    }

    /// <summary>Both ways ended cleanly (the socket's FIN sent on, the peer's passed on): the connection closes.</summary>
    private void EndIfDone()
    {
        if (_endSent && _writeShut && !_finished)
        {
            End(LoopRelayEnd.Closed, reset: false);
        }
    }
}
