using System.Buffers;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Tcp;

/// <summary>
/// The target's bytes to the caller, on the loop: each read goes into a pooled buffer as large as the stream's credit
/// allows: <see cref="UplinkStream.WaitingReadSize"/> (16 KiB) at first, so a small message rents a small buffer and a
/// crowd of quiet connections holds little, and a whole frame (<see cref="UplinkSettings.DataChunkSize"/>) after a read
/// that filled its buffer (a bulk transfer), as <see cref="UplinkStream.SendStreamAsync"/> does. It becomes a Data frame
/// queued for the uplink's writer with no copy. Out of credit, reading pauses until the peer grants more
/// (<see cref="OnSendCredit"/>). An idle connection holds no buffer.
/// </summary>
internal sealed partial class LoopTargetConnection : ISendCreditListener
{
    /// <summary>Reads of one connection per readiness, so one busy target does not hold the loop from the others.</summary>
    private const int ReadsPerTurn = 4;

    private static readonly Action<object?> ResumeOnLoop = static state => ((LoopTargetConnection)state!).ResumeReading();
    private static readonly Action<object?> EndSentOnLoop = static state => ((LoopTargetConnection)state!).OnEndSent();

    private bool _targetEnded;
    private bool _endSent;
    private bool _waitingForCredit;
    private long _fromTarget;

    /// <summary>The last read filled its buffer: more is waiting, so the next one takes a whole frame's worth.</summary>
    private bool _bulk;

    public void OnReadable(LoopSocket socket)
    {
        for (int reads = 0; reads < ReadsPerTurn && !_finished; reads++)
        {
            int credit = _stream.TryTakeSendCredit(_bulk ? _stream.Uplink.Settings.DataChunkSize : UplinkStream.WaitingReadSize);
            if (credit == 0)
            {
                socket.ReadPaused = true;
                _waitingForCredit = true;
                _stream.NotifyOnSendCredit(this);
                return;
            }

            byte[] pooled = ArrayPool<byte>.Shared.Rent(credit);
            ReceiveResult read = socket.Receive(pooled.AsSpan(0, credit));
            if (read.Status == ReceiveStatus.Data)
            {
                _stream.ReturnUnusedSendCredit(credit - read.Bytes);
                _fromTarget += read.Bytes;
                _bulk = read.Bytes == credit;
                // A short read took all there was: no second read just to hear EAGAIN (level-triggered, the loop
                // calls again when more comes).
                if (!TrySend(pooled, read.Bytes) || read.Bytes < credit)
                {
                    return;
                }

                continue;
            }

            ArrayPool<byte>.Shared.Return(pooled);
            _stream.ReturnUnusedSendCredit(credit);
            OnReadEnded(read);
            return;
        }
    }

    /// <summary>The peer granted credit (or the stream failed): from the granting thread.</summary>
    public void OnSendCredit() => _relay.Loop.Post(ResumeOnLoop, this);

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
            _stream.SendPooled(pooled, length);
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
                _targetEnded = true;
                // Off the loop: the stream's last frame may be written inline to the uplink, which may log if it fails.
                LoopTargetRelay.OffLoop(static c => c.SendEnd(), this);
                break;
            case ReceiveStatus.Failed:
                TargetFailed(read.Error);
                break;
        }
    }

    /// <summary>Off the loop: the target's FIN goes up as END_STREAM, then the loop hears of it.</summary>
    private void SendEnd()
    {
        try
        {
            _stream.TrySendEnd();
        }
        catch (UplinkClosedException)
        {
            // The abort listener ends the connection.
        }

        _relay.Loop.Post(EndSentOnLoop, this);
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

    /// <summary>Both ways ended cleanly (the target's FIN sent up, the caller's passed on): the connection closes.</summary>
    private void EndIfDone()
    {
        if (_endSent && _writeShut && !_finished)
        {
            Finish("closed by both sides", reset: false);
        }
    }
}
