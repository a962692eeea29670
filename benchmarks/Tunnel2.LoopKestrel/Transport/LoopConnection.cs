using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.LoopKestrel.Transport;

/// <summary>
/// One accepted connection as Kestrel sees it (its <c>TransportConnection</c>'s job, over a <see cref="LoopSocket"/>):
/// the loop reads into the input pipe's memory and flushes, and Kestrel, scheduled inline, parses and answers on the
/// loop's thread; the loop drains the output pipe with one send per turn. Created and driven on the loop.
/// </summary>
internal sealed partial class LoopConnection : ConnectionContext, ILoopSocketHandler, IConnectionIdFeature,
    IConnectionTransportFeature, IConnectionItemsFeature, IConnectionLifetimeFeature, IMemoryPoolFeature
{
    private const int MinimumReadSize = 4096;
    private const int ReadsPerTurn = 4;
    private const long MaxReadBuffer = 1024 * 1024; // Kestrel's default MaxRequestBufferSize
    private const long MaxWriteBuffer = 64 * 1024;  // Kestrel's default MaxResponseBufferSize

    private static long s_lastId;

    private readonly LoopScheduler _scheduler;
    private readonly Pipe _input;
    private readonly Pipe _output;
    private readonly WritableSignal _writable = new();
    private readonly CancellationTokenSource _closed = new();
    private LoopSocket? _socket;
    private IDictionary<object, object?>? _items;
    private bool _inputDone, _outputDone, _waitingWritable;
    private int _closedSignalled;

    public LoopConnection(LoopScheduler scheduler, MemoryPool<byte> pool, EndPoint local)
    {
        _scheduler = scheduler;
        MemoryPool = pool;
        LocalEndPoint = local;
        // Input: the loop writes, Kestrel reads inline (on the loop); a loop flush held back resumes on the loop.
        _input = new Pipe(new PipeOptions(pool, readerScheduler: PipeScheduler.Inline, writerScheduler: scheduler,
            pauseWriterThreshold: MaxReadBuffer, resumeWriterThreshold: MaxReadBuffer / 2, useSynchronizationContext: false));
        // Output: Kestrel writes; the loop's drain resumes at the end of the turn; Kestrel's held-back flush resumes inline.
        _output = new Pipe(new PipeOptions(pool, readerScheduler: scheduler, writerScheduler: PipeScheduler.Inline,
            pauseWriterThreshold: MaxWriteBuffer, resumeWriterThreshold: MaxWriteBuffer / 2, useSynchronizationContext: false));
        Transport = new DuplexPipe(_input.Reader, _output.Writer);
        ConnectionId = "L" + Interlocked.Increment(ref s_lastId).ToString("X");
        Features = new FeatureCollection();
        Features.Set<IConnectionIdFeature>(this);
        Features.Set<IConnectionTransportFeature>(this);
        Features.Set<IConnectionItemsFeature>(this);
        Features.Set<IConnectionLifetimeFeature>(this);
        Features.Set<IMemoryPoolFeature>(this);
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

    /// <summary>On the loop: takes the accepted descriptor and starts the output drain.</summary>
    public void Start(int fd)
    {
        _socket = LoopSocket.Adopt(_scheduler.Loop, fd, this);
        _socket.SetNoDelay();
        _ = DrainOutputAsync();
    }

    public override void Abort(ConnectionAbortedException abortReason) =>
        _scheduler.Loop.Post(static state => ((LoopConnection)state!).Shut(reset: true), this);

    public override ValueTask DisposeAsync()
    {
        _scheduler.Loop.Post(static state => ((LoopConnection)state!).Shut(reset: false), this);
        return base.DisposeAsync();
    }

    public void OnWritable(LoopSocket socket) => WakeDrain();

    public void OnClosed(LoopSocket socket, LoopError reason) => Shut(reset: false);

    /// <summary>On the loop: the socket goes, both pipes end, and the closed token fires (on the thread pool, as
    /// Kestrel's socket transport does, since its callbacks are the application's).</summary>
    private void Shut(bool reset)
    {
        if (_socket is { IsClosed: false } socket)
        {
            if (reset)
            {
                socket.Reset();
            }
            else
            {
                socket.Close();
            }
        }
        EndInput(new ConnectionAbortedException());
        if (!_outputDone)
        {
            _output.Reader.CancelPendingRead();
        }
        WakeDrain();
        if (Interlocked.Exchange(ref _closedSignalled, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static cts => cts.Cancel(), _closed, preferLocal: false);
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
