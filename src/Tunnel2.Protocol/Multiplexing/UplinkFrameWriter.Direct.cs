namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Large Data payloads without the copy: the loop writes such a frame's header as the last of its batch, flushes the
/// batch, then sends the payload from its pooled buffer straight to the connection. Only the loop does this, while it
/// owns the output from the header to the payload's end: an inline sender (<see cref="SendNowOrWake"/>) copies such a
/// payload into the output like any other, so no one else ever writes to the connection between a header and its payload.
/// </summary>
internal sealed partial class UplinkFrameWriter
{
    /// <summary>A Data payload this large costs a send of its own (after its header's batch) rather than a copy.</summary>
    private const int DirectPayloadBytes = 32 * 1024;

    private readonly Stream? _connection;
    private OutboundFrame _direct;
    private bool _hasDirect;

    /// <summary>Writes the header of a frame whose payload goes to the connection directly, and keeps the frame; false for any other frame.</summary>
    private bool TryKeepDirect(in OutboundFrame frame)
    {
        if (_connection is null || !frame.HasPooledPayloadOf(DirectPayloadBytes))
        {
            return false;
        }

        frame.WriteHeaderTo(_output);
        _direct = frame;
        _hasDirect = true;
        return true;
    }

    /// <summary>Sends the waiting large payload straight to the connection; its header has just been flushed.</summary>
    private async ValueTask WriteDirectAsync()
    {
        try
        {
            // The uplink's close ends a write that waits for a peer that does not read, as it wakes a flush.
            await _connection!.WriteAsync(_direct.PooledPayload, _uplink.Closed).ConfigureAwait(false);
        }
        finally
        {
            ReturnDirect();
        }

        Volatile.Write(ref _lastSentTicks, Environment.TickCount64);
    }

    /// <summary>Gives the waiting payload's buffer back to the pool (after its send, or on the way out without it).</summary>
    private void ReturnDirect()
    {
        if (_hasDirect)
        {
            _hasDirect = false;
            _direct.ReturnBuffer();
            _direct = default;
        }
    }
}
