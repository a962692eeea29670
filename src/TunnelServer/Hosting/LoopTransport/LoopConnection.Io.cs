using System.Buffers;
using System.IO.Pipelines;
using Microsoft.AspNetCore.Connections;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>The loop's two jobs for a connection: read into the input pipe, drain the output pipe.</summary>
internal sealed partial class LoopConnection
{
    public void OnReadable(LoopSocket socket)
    {
        if (_inputDone)
        {
            socket.ReadPaused = true;
            return;
        }

        if (_readBefore && _budget.IsSpent)
        {
            return; // a body's or a later request's bytes: read in a later turn, after this turn's new callers
        }

        bool any = false;
        for (int i = 0; i < ReadsPerTurn; i++)
        {
            Memory<byte> memory = _input.Writer.GetMemory(MinimumReadSize);
            ReceiveResult result = socket.Receive(memory.Span);
            if (result.Status == ReceiveStatus.Data)
            {
                _input.Writer.Advance(result.Bytes);
                Spent(result.Bytes);
                any = true;
                if (result.Bytes < memory.Length)
                {
                    break;
                }

                continue;
            }

            if (result.Status == ReceiveStatus.EndOfStream)
            {
                // The caller's half-close: what it sent is Kestrel's, the response still goes out, and, as the socket
                // transport does, ConnectionClosed fires (Kestrel's RequestAborted: a caller gone mid-request).
                Flush(socket, any);
                EndInput(null);
                SignalClosed();
                return;
            }

            if (result.Status != ReceiveStatus.WouldBlock)
            {
                Flush(socket, any);
                CallerFailed(result.Error.ToString());
                return;
            }

            break;
        }

        Flush(socket, any);
    }

    /// <summary>The first read is the connection's own (a new caller's head); later ones count against the turn's budget.</summary>
    private void Spent(int bytes)
    {
        if (_readBefore)
        {
            _budget.Spend(bytes);
        }
    }

    /// <summary>
    /// The caller's connection broke (a read failed, or the loop found it reset while reading was paused). Kestrel
    /// reads inline here: the request is aborted first, so that the app, failing its body read at once, already sees
    /// the caller gone (RequestAborted) and ends the exchange as a caller that left, not as a failed upstream (502),
    /// as the socket transport's thread-pool hop allows.
    /// </summary>
    private void CallerFailed(string error)
    {
        CancelClosedNow();
        EndInput(new ConnectionResetException($"The caller's connection failed: {error}."));
        Shut();
    }

    /// <summary>Hands what was read to Kestrel: with the inline reader scheduler, the request is parsed and answered
    /// inside this flush. A flush held back (Kestrel's read-ahead is full) pauses reading until it resumes.</summary>
    private void Flush(LoopSocket socket, bool any)
    {
        _readBefore |= any;
        if (!any || _inputDone)
        {
            return;
        }

        ValueTask<FlushResult> flush = _input.Writer.FlushAsync();
        if (flush.IsCompletedSuccessfully)
        {
            if (flush.Result.IsCompleted)
            {
                EndInput(null); // Kestrel reads no more
            }

            return;
        }

        socket.ReadPaused = true;
        _ = ResumeAfterFlushAsync(socket, flush);
    }

    private async Task ResumeAfterFlushAsync(LoopSocket socket, ValueTask<FlushResult> flush)
    {
        FlushResult result = await flush; // resumes on the loop (the input pipe's writer scheduler)
        if (result.IsCompleted)
        {
            EndInput(null);
        }
        else if (!socket.IsClosed && !_inputDone)
        {
            socket.ReadPaused = false;
        }
    }

    /// <summary>On the loop for the connection's life: each time Kestrel flushes, at the end of the loop's turn, one
    /// gather send of all that is buffered; a partial send waits for the socket to drain. When Kestrel completes the
    /// output, a FIN follows what was sent and the socket closes.</summary>
    private async Task DrainOutputAsync()
    {
        PipeReader reader = _output.Reader;
        Exception? error = null;
        try
        {
            while (true)
            {
                ReadResult result = await reader.ReadAsync();
                ReadOnlySequence<byte> buffer = result.Buffer;
                while (!buffer.IsEmpty && _socket is { IsClosed: false } socket)
                {
                    int sent = socket.SendSome(buffer);
                    if (sent < 0)
                    {
                        error = new ConnectionResetException("The caller's connection failed while the response was sent.");
                        break;
                    }

                    Sent(sent);
                    buffer = buffer.Slice(sent);
                    if (!buffer.IsEmpty)
                    {
                        _waitingWritable = true;
                        await _writable.WaitAsync();
                    }
                }

                reader.AdvanceTo(buffer.End);
                bool canceled = result.IsCanceled;
                if (canceled && error is null && _handover is not null)
                {
                    // A handover's cancel (Shut's closes the socket first): everything flushed has gone.
                    if (TryHandOver())
                    {
                        break;
                    }

                    canceled = false; // refused: the connection stays Kestrel's
                }

                if (result.IsCompleted || canceled || error is not null || _socket is not { IsClosed: false })
                {
                    break;
                }
            }
        }
        finally
        {
            _outputDone = true;
            EndSends();
            _handover?.TrySetResult(null); // asked for as the connection ended
            _handover = null;
            await reader.CompleteAsync(error);
            if (_handedOver)
            {
                // The descriptor is the relay's: no FIN, no close, and ConnectionClosed fires only on an abort.
                _drained.TrySetResult();
            }
            else
            {
                EndAfterDrain();
            }
        }
    }

    /// <summary>What was sent gets a FIN and the socket closes; the pipes end.</summary>
    private void EndAfterDrain()
    {
        if (_socket is { IsClosed: false } socket)
        {
            socket.CloseAfterDrain();
        }

        Shut();
        _drained.TrySetResult();
    }
}
