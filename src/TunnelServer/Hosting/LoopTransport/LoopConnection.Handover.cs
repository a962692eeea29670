using System.Buffers;
using System.IO.Pipelines;
using Tunnel2.ProxyEntry.Upgrades;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// An upgraded caller's descriptor handed to ProxyEntry's relay on this loop (<c>TunnelServer:Public:UpgradeRelay</c> =
/// <c>Loop</c>). The output drain makes the handover: the request cancels its pending read, so the drain's next read
/// returns all Kestrel flushed (the 101), sends it to the last byte (waiting for the socket when it must), and only then
/// lets the descriptor go, with what Kestrel's input held past the request head. Kestrel's connection then ends as any
/// other, minus the descriptor.
/// </summary>
internal sealed partial class LoopConnection : ICallerHandoverFeature
{
    private TaskCompletionSource<CallerHandover?>? _handover;
    private bool _handedOver;

    public Task<CallerHandover?> HandOverAsync()
    {
        var handover = new TaskCompletionSource<CallerHandover?>(TaskCreationOptions.RunContinuationsAsynchronously);
        // Always a later turn, never inline: the drain's read of the 101 may itself wait for this turn's end.
        if (!_scheduler.Loop.Post(static state => RequestHandover(((LoopConnection, TaskCompletionSource<CallerHandover?>))state!), (this, handover)))
        {
            handover.TrySetResult(null); // the loop has stopped: the connection is going anyway
        }

        return handover.Task;
    }

    private static void RequestHandover((LoopConnection Connection, TaskCompletionSource<CallerHandover?> Handover) request)
    {
        LoopConnection connection = request.Connection;
        if (connection._outputDone || connection._handover is not null || connection._socket is not { IsClosed: false })
        {
            request.Handover.TrySetResult(null);
            return;
        }

        connection._handover = request.Handover;
        connection._output.Reader.CancelPendingRead(); // the drain's read returns, with what was flushed
    }

    /// <summary>In the drain, on the loop, with nothing left unsent: the descriptor goes, or the handover is refused.</summary>
    /// <returns>Whether it went: the drain then stops, leaving the descriptor open.</returns>
    private bool TryHandOver()
    {
        TaskCompletionSource<CallerHandover?>? handover = _handover;
        _handover = null;
        if (handover is null)
        {
            return false;
        }

        if (_socket is not { IsClosed: false, QueuedBytes: 0 } socket || !TryTakeEarlyBytes(out byte[] early))
        {
            handover.TrySetResult(null);
            return false;
        }

        int fd = socket.Release();
        _handedOver = true;
        handover.TrySetResult(new CallerHandover(_scheduler.Loop, fd, early));
        return true;
    }

    /// <summary>What Kestrel's input holds past the request head, examined or not; false when Kestrel is reading it (or it failed).</summary>
    private bool TryTakeEarlyBytes(out byte[] early)
    {
        early = [];
        try
        {
            // A pending read of Kestrel's throws here. Otherwise the read is only refused: Kestrel examined all it has
            // (the head's parse), and TryRead returns nothing until more comes. A cancel then returns all unconsumed.
            if (!_input.Reader.TryRead(out ReadResult read))
            {
                _input.Reader.CancelPendingRead();
                if (!_input.Reader.TryRead(out read))
                {
                    return true;
                }
            }

            early = read.Buffer.ToArray();
            _input.Reader.AdvanceTo(read.Buffer.End);
            return true;
        }
        catch (Exception ex) when (ex is InvalidOperationException or IOException or OperationCanceledException)
        {
            return false;
        }
    }
}
