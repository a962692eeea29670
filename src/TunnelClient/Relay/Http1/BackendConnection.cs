using System.IO.Pipelines;
using System.Net.Security;
using System.Net.Sockets;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Hosting.Sockets;

using Tunnel2.TunnelClient.Relay.OnLoop;

namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>One keep-alive HTTP/1.1 connection to the backend, read and written through pipes.</summary>
internal sealed class BackendConnection : IAsyncDisposable, IStreamAbortListener
{
    private readonly Socket _socket;
    private readonly Stream _stream;
    private ValueTask<ReadResult>? _readAhead;

    private BackendConnection(Socket socket, Stream stream, Func<bool> isCrowded)
    {
        _socket = socket;
        _stream = stream;
        // The pipe reads heads and chunked bodies; bodies of known length go from the socket straight into Data frames
        // (ResponseBodyPump), so this buffer only bounds how much of a body one head read can take in with it, and a
        // slow caller's stream holds it until its window lets that much through: 16 KiB (one initial window) rather
        // than 64 keeps 9,700 slow streams from holding ~600 MiB (docs/benchmarks/2026-11-24-storm.md). While the
        // backend is crowded, a read waits for its bytes before it takes a buffer (CrowdAwareReadStream).
        Input = PipeReader.Create(
            new CrowdAwareReadStream(stream, isCrowded),
            new StreamPipeReaderOptions(bufferSize: 16 * 1024, minimumReadSize: 4096, leaveOpen: true, useZeroByteReads: true));
        Output = PipeWriter.Create(stream, new StreamPipeWriterOptions(minimumBufferSize: 16 * 1024, leaveOpen: true));
    }

    public PipeReader Input { get; }

    /// <summary>The byte stream under <see cref="Input"/>, for reads straight into a frame once the pipe holds nothing.</summary>
    public Stream Stream => _stream;

    public PipeWriter Output { get; }

    /// <summary>The socket under <see cref="Stream"/>: an upgraded stream's relay shuts its sending side when the caller ends its side (a half-close).</summary>
    public Socket Socket => _socket;

    /// <param name="unsentBytesLimit">TCP_NOTSENT_LOWAT for the socket (0 = the system's default).</param>
    /// <param name="isCrowded">Whether reads should wait for data before they take a buffer (see <see cref="CrowdAwareReadStream"/>).</param>
    public static async Task<BackendConnection> ConnectAsync(Uri backend, TimeSpan timeout, int unsentBytesLimit, Func<bool> isCrowded, CancellationToken cancellationToken)
    {
        using var connectTimeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        connectTimeout.CancelAfter(timeout);
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        UnsentBytesLimit.TryApply(socket, unsentBytesLimit);
        try
        {
            await socket.ConnectAsync(backend.Host, backend.Port, connectTimeout.Token);
            Stream stream = new NetworkStream(socket, ownsSocket: false);
            if (backend.Scheme == Uri.UriSchemeHttps)
            {
                var tls = new SslStream(stream, leaveInnerStreamOpen: false);
                await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = backend.Host }, connectTimeout.Token);
                stream = tls;
            }

            return new BackendConnection(socket, stream, isCrowded);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>A new connection on the client's event loop (<c>TunnelClient:Backends:Relay</c> = <c>Loop</c>, a plain-HTTP backend).</summary>
    /// <exception cref="SocketException">It could not be made.</exception>
    /// <exception cref="OperationCanceledException">The connect timeout (or <paramref name="cancellationToken"/>) ended it.</exception>
    public static async Task<BackendConnection> ConnectOnLoopAsync(LoopBackendDialer dialer, TimeSpan timeout, int unsentBytesLimit, Func<bool> isCrowded, CancellationToken cancellationToken)
    {
        using var connectTimeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        connectTimeout.CancelAfter(timeout);
        (Socket socket, LoopSocketStream stream) = await dialer.ConnectAsync(socket => UnsentBytesLimit.TryApply(socket, unsentBytesLimit), connectTimeout.Token);
        return new BackendConnection(socket, stream, isCrowded);
    }

    /// <summary>The connection's bytes go through the client's event loop, which owns its socket.</summary>
    public bool IsOnLoop => _stream is LoopSocketStream;

    /// <summary>
    /// Right after a response ended where its framing says: null when nothing follows it in what was already read,
    /// else why the connection cannot carry another exchange. Reads of up to 256 KiB can pull in bytes past the end of
    /// the response; they belong to no request, and a reused connection would hand them to the next caller.
    /// </summary>
    public CloseCause? CheckNothingBuffered()
    {
        // The body readers advance "examined" only as far as they consumed, so buffered bytes past the response show here.
        if (!Input.TryRead(out ReadResult result))
        {
            return null;
        }

        bool surplus = !result.Buffer.IsEmpty;
        Input.AdvanceTo(result.Buffer.Start);
        return surplus ? CloseCause.BytesAfterResponse
            : result.IsCompleted ? CloseCause.ClosedAfterResponse
            : null;
    }

    /// <summary>
    /// When an idle connection is taken from the pool: starts the read that will bring the response head. It completes
    /// at once only when the backend closed the connection or sent bytes while it idled; then that cause comes back and
    /// the connection must not be used. The read is needed anyway, so this costs no syscall of its own, where a
    /// <c>poll()</c> per reuse did (SocketsHttpHandler checks a pooled connection the same way).
    /// </summary>
    public CloseCause? BeginReadAhead()
    {
        ValueTask<ReadResult> read;
        try
        {
            read = Input.ReadAsync(CancellationToken.None);
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException)
        {
            return CloseCause.ClosedWhileIdle;
        }

        if (!read.IsCompleted)
        {
            _readAhead = read;
            return null;
        }

        try
        {
            ReadResult result = read.Result;
            bool surplus = !result.Buffer.IsEmpty;
            Input.AdvanceTo(result.Buffer.Start);
            return surplus ? CloseCause.BytesWhileIdle : CloseCause.ClosedWhileIdle;
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException)
        {
            return CloseCause.ClosedWhileIdle;
        }
    }

    /// <summary>The read started by <see cref="BeginReadAhead"/>, for the response head's first read; null when none is pending.</summary>
    public ValueTask<ReadResult>? TakeReadAhead()
    {
        ValueTask<ReadResult>? pending = _readAhead;
        _readAhead = null;
        return pending;
    }

    /// <summary>
    /// The stream this connection serves was reset or lost its uplink: ends every read and write in progress at once
    /// (a pipe read comes back cancelled, a socket operation aborted), so the exchange stops without a cancellation token
    /// per request. The socket is closed with a reset, not a FIN: the backend learns the request is over at once, and an
    /// unfinished request's bytes still queued in the socket are dropped rather than fed to it at its own pace first (a
    /// slow reader would take seconds per queued upload). The connection is never reused after that.
    /// </summary>
    public void OnStreamAborted()
    {
        if (_stream is LoopSocketStream onLoop)
        {
            Input.CancelPendingRead();
            onLoop.Abort(); // on the loop, which owns the socket
            return;
        }

        try
        {
            Input.CancelPendingRead();
            _socket.LingerState = new LingerOption(true, 0);
            _socket.Close();
        }
        catch (Exception ex) when (ex is ObjectDisposedException or SocketException)
        {
            // Already closed: nothing left in progress to end.
        }
    }

    /// <summary>
    /// Lets go of the buffer of the last write. A socket's cached send arguments keep it (here the request's 16 KiB pipe
    /// segment, long since back in the pool) for as long as the connection lives, and a long body can take minutes to
    /// a slow caller: under ~10,000 slow readers such arrays were the client's largest item, and this took ~2,900 of
    /// 8,300 away (docs/benchmarks/2026-11-24-storm.md). A zero-byte send points them at no buffer; under TLS too, since
    /// the TLS stream writes through the same socket. Costs one syscall.
    /// </summary>
    public async ValueTask ReleaseWriteBufferAsync()
    {
        if (IsOnLoop)
        {
            return; // no send arguments of the runtime's keep a buffer here
        }

        try
        {
            await _socket.SendAsync(ReadOnlyMemory<byte>.Empty, SocketFlags.None);
        }
        catch (Exception ex) when (ex is ObjectDisposedException or SocketException)
        {
            // Closed or reset: the body's reads find out and end the exchange.
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (TakeReadAhead() is { } pending)
        {
            // Not taken by a response (the exchange failed before it): end it before completing the reader under it.
            Input.CancelPendingRead();
            try
            {
                ReadResult result = await pending;
                Input.AdvanceTo(result.Buffer.Start);
            }
            catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException or OperationCanceledException)
            {
                // the connection is being closed either way
            }
        }

        await Input.CompleteAsync();
        await Output.CompleteAsync();
        await _stream.DisposeAsync();
        if (!IsOnLoop)
        {
            _socket.Dispose(); // on the loop, the loop's socket disposes it once it has left the loop's epoll set
        }
    }
}
