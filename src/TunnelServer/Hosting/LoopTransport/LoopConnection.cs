using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Upgrades;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// One accepted public connection as Kestrel sees it (its socket transport's <c>SocketConnection</c>, over a
/// <see cref="LoopSocket"/>): the loop reads into the input pipe's memory and flushes, and Kestrel, whose reads
/// continue inline, parses and answers on the loop's thread; the loop drains the output pipe with one gather send per
/// turn. Created and driven on the loop; <see cref="Abort"/> and <see cref="DisposeAsync"/> come from any thread.
/// </summary>
internal sealed partial class LoopConnection : ConnectionContext, ILoopSocketHandler, IConnectionIdFeature,
    IConnectionTransportFeature, IConnectionItemsFeature, IConnectionLifetimeFeature, IMemoryPoolFeature, IConnectionSocketFeature
{
    private const int MinimumReadSize = 4096;
    private const int ReadsPerTurn = 4;

    private static long s_lastId;

    private readonly LoopScheduler _scheduler;
    private readonly LoopReadBudget _budget;
    private readonly Pipe _input;
    private readonly Pipe _output;
    private readonly CountingPipeWriter _counted;
    private readonly WritableSignal _writable = new();
    private readonly CancellationTokenSource _closed = new();
    private readonly TaskCompletionSource _drained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private LoopSocket? _socket;
    private System.Net.Sockets.Socket? _probe;
    private IDictionary<object, object?>? _items;
    private bool _inputDone, _outputDone, _waitingWritable, _readBefore;
    private int _closedSignalled;

    /// <param name="callerHandover">Whether an upgraded caller may leave for ProxyEntry's relay on this loop (<see cref="ICallerHandoverFeature"/>).</param>
    public LoopConnection(LoopScheduler scheduler, LoopReadBudget budget, MemoryPool<byte> pool, LoopConnectionLimits limits, EndPoint local, IPEndPoint? remote,
        bool callerHandover = false)
    {
        _scheduler = scheduler;
        _budget = budget;
        MemoryPool = pool;
        LocalEndPoint = local;
        RemoteEndPoint = remote;
        // Input: the loop writes, Kestrel reads inline (on the loop); a loop flush held back resumes on the loop.
        _input = new Pipe(new PipeOptions(pool, readerScheduler: PipeScheduler.Inline, writerScheduler: scheduler,
            pauseWriterThreshold: limits.MaxReadBuffer, resumeWriterThreshold: limits.MaxReadBuffer / 2, useSynchronizationContext: false));
        // Output: Kestrel writes; the loop's drain resumes at the end of the turn; Kestrel's held-back flush resumes inline.
        _output = new Pipe(new PipeOptions(pool, readerScheduler: scheduler, writerScheduler: PipeScheduler.Inline,
            pauseWriterThreshold: limits.MaxWriteBuffer, resumeWriterThreshold: limits.MaxWriteBuffer / 2, useSynchronizationContext: false));
        _counted = new CountingPipeWriter(_output.Writer);
        Transport = new DuplexPipe(_input.Reader, _counted);
        ConnectionId = "L" + Interlocked.Increment(ref s_lastId).ToString("X");
        Features = new FeatureCollection();
        Features.Set<IConnectionIdFeature>(this);
        Features.Set<IConnectionTransportFeature>(this);
        Features.Set<IConnectionItemsFeature>(this);
        Features.Set<IConnectionLifetimeFeature>(this);
        Features.Set<IMemoryPoolFeature>(this);
        Features.Set<IConnectionSocketFeature>(this);
        Features.Set<ISendProgress>(this);
        if (callerHandover)
        {
            Features.Set<ICallerHandoverFeature>(this);
        }
    }

    public override string ConnectionId { get; set; }

    public override IFeatureCollection Features { get; }

    public override IDictionary<object, object?> Items
    {
        get => _items ??= new Dictionary<object, object?>();
        set => _items = value;
    }

    public override IDuplexPipe Transport { get; set; }

    public override CancellationToken ConnectionClosed
    {
        get => _closed.Token;
        set => throw new NotSupportedException();
    }

    public MemoryPool<byte> MemoryPool { get; }

    /// <summary>The loop that reads and sends for this connection.</summary>
    public Tunnel2.Loops.EventLoop Loop => _scheduler.Loop;

    /// <summary>
    /// The caller's descriptor as a runtime socket that does not own it, made when first asked: ProxyEntry asks a
    /// held-back upload's connection for its TCP state (<c>CallerConnection</c>, a getsockopt off the loop) to find a
    /// caller that reset while nothing was read. Never used for I/O: the loop owns the descriptor.
    /// </summary>
#pragma warning disable CA2000 // the handle does not own the descriptor; the socket lives as long as the connection
    public System.Net.Sockets.Socket Socket =>
        _probe ??= new System.Net.Sockets.Socket(new System.Net.Sockets.SafeSocketHandle(_socket?.Fd ?? -1, ownsHandle: false));
#pragma warning restore CA2000

    /// <summary>On the loop: takes the accepted descriptor and starts the output drain.</summary>
    public void Start(int fd)
    {
        _socket = LoopSocket.Adopt(_scheduler.Loop, fd, this);
        _socket.SetNoDelay();
        _ = DrainOutputAsync();
    }

    /// <summary>As the socket transport: what is unsent is dropped and the socket closes (a FIN, or a reset when
    /// request bytes were left unread); the pipes end. Always in a later turn, even when called on the loop: Kestrel
    /// aborts the transport before it marks the request aborted (its RequestAborted), and an input ended inline would
    /// fail the app's body read in between, which then takes a caller that left for a failed upstream (a 502). The
    /// socket transport's abort likewise ends the input later, on its receive loop.</summary>
    public override void Abort(ConnectionAbortedException abortReason) => PostToLoop(static connection => connection.Shut());

    /// <summary>Kestrel is done (it has completed both pipes): what it wrote still goes out, then the socket closes.
    /// Completes, as the socket transport's does, once the output has been sent or dropped.</summary>
    public override async ValueTask DisposeAsync()
    {
        // Kestrel's ends of the pipes, completed here as the socket transport does, so the drain sees the output's end.
        await _input.Reader.CompleteAsync().ConfigureAwait(false);
        await _output.Writer.CompleteAsync().ConfigureAwait(false);
        OnLoop(static connection =>
        {
            connection.EndInput(null);
            if (connection._outputDone)
            {
                connection.Shut();
            }
        });
        await _drained.Task.ConfigureAwait(false);
        await base.DisposeAsync().ConfigureAwait(false);
    }

    public void OnWritable(LoopSocket socket) => WakeDrain();

    public void OnClosed(LoopSocket socket, LoopError reason) => CallerFailed(reason.ToString());

    /// <summary>On the loop: the socket goes, both pipes end, and the closed token fires (on the thread pool, as
    /// Kestrel's socket transport does, since its callbacks are the application's).</summary>
    private void Shut()
    {
        if (_socket is { IsClosed: false } socket)
        {
            socket.Close();
        }

        EndInput(new ConnectionAbortedException("The connection was closed."));
        if (!_outputDone)
        {
            _output.Reader.CancelPendingRead();
        }

        WakeDrain();
        SignalClosed();
    }

    /// <summary>Fires ConnectionClosed on this thread (the loop, where Kestrel and the app run with this transport).</summary>
    private void CancelClosedNow()
    {
        if (Interlocked.Exchange(ref _closedSignalled, 1) == 0)
        {
            _closed.Cancel();
        }
    }

    private void SignalClosed()
    {
        if (Interlocked.Exchange(ref _closedSignalled, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static cts => cts.Cancel(), _closed, preferLocal: false);
        }
    }

    private void OnLoop(Action<LoopConnection> work)
    {
        if (_scheduler.Loop.IsOnLoopThread)
        {
            work(this);
            return;
        }

        PostToLoop(work);
    }

    private void PostToLoop(Action<LoopConnection> work)
    {
        if (!_scheduler.Loop.Post(static state => { var (w, c) = ((Action<LoopConnection>, LoopConnection))state!; w(c); }, (work, this)))
        {
            _drained.TrySetResult(); // the loop has stopped and closed every descriptor
        }
    }

    private void WakeDrain()
    {
        if (_waitingWritable)
        {
            _waitingWritable = false;
            _writable.Set();
        }
    }

    private void EndInput(Exception? error)
    {
        if (!_inputDone)
        {
            _inputDone = true;
            _input.Writer.Complete(error);
        }
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }
}
