using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace Tunnel2.Spikes.Http2Uplink;

/// <summary>
/// The public side: a Kestrel public endpoint for <c>/session/{id}/...</c> and a raw TCP tunnel listener. Each
/// session has one <see cref="HttpMessageInvoker"/> whose <see cref="SocketsHttpHandler.ConnectCallback"/> hands out
/// the TCP connection the session's client dialed, so every public request becomes one HTTP/2 stream on it.
/// </summary>
internal static class SpikeServer
{
    public static async Task<int> RunAsync(IPEndPoint publicEndPoint, IPEndPoint tunnelEndPoint)
    {
        var sessions = new ConcurrentDictionary<string, Session>(StringComparer.Ordinal);

        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.AddServerHeader = false;
            kestrel.Limits.MaxRequestBodySize = null;
            kestrel.Listen(publicEndPoint, listen => listen.Protocols = HttpProtocols.Http1);
        });
        var app = builder.Build();

        app.Run(context => ForwardAsync(context, sessions));

        using var stopping = new CancellationTokenSource();
        var listener = new Socket(tunnelEndPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        listener.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        listener.Bind(tunnelEndPoint);
        listener.Listen(512);
        var acceptLoop = AcceptLoopAsync(listener, sessions, stopping.Token);

        Console.WriteLine($"h2spike server: public http://{publicEndPoint}, tunnel {tunnelEndPoint}");
        await app.RunAsync();

        await stopping.CancelAsync();
        listener.Dispose();
        try
        {
            await acceptLoop;
        }
        catch (Exception) when (stopping.IsCancellationRequested)
        {
        }

        foreach (var session in sessions.Values)
        {
            session.Dispose();
        }

        return 0;
    }

    private static async Task ForwardAsync(HttpContext context, ConcurrentDictionary<string, Session> sessions)
    {
        // /session/{id}/rest?query → /rest?query on the session's client
        var path = context.Request.Path.Value ?? "/";
        const string prefix = "/session/";
        if (!path.StartsWith(prefix, StringComparison.Ordinal))
        {
            await HttpRelay.Problem(context, StatusCodes.Status404NotFound, "Not found", "Use /session/{id}/...");
            return;
        }

        var slash = path.IndexOf('/', prefix.Length);
        var id = slash < 0 ? path[prefix.Length..] : path[prefix.Length..slash];
        var rest = slash < 0 ? "/" : path[slash..];
        if (!sessions.TryGetValue(id, out var session) || session.Live == 0)
        {
            await HttpRelay.Problem(context, StatusCodes.Status404NotFound, "Unknown session",
                $"No client is connected for session '{id}'.");
            return;
        }

        var target = new Uri(session.BaseUri, rest + context.Request.QueryString.Value);
        await HttpRelay.RelayAsync(context, session.Invoker, target, HttpVersion.Version20,
            HttpVersionPolicy.RequestVersionExact, (ctx, request) =>
            {
                var headers = request.Headers;
                headers.TryAddWithoutValidation("X-Forwarded-For", ctx.Connection.RemoteIpAddress?.ToString());
                headers.TryAddWithoutValidation("X-Forwarded-Proto", ctx.Request.Scheme);
                headers.TryAddWithoutValidation("X-Forwarded-Host", ctx.Request.Host.Value);
                headers.TryAddWithoutValidation("X-Forwarded-Prefix", prefix + id);
            });
    }

    private static async Task AcceptLoopAsync(
        Socket listener, ConcurrentDictionary<string, Session> sessions, CancellationToken stopping)
    {
        while (!stopping.IsCancellationRequested)
        {
            var socket = await listener.AcceptAsync(stopping);
            _ = LoginAsync(socket, sessions, stopping);
        }
    }

    private static async Task LoginAsync(
        Socket socket, ConcurrentDictionary<string, Session> sessions, CancellationToken stopping)
    {
        try
        {
            socket.NoDelay = true;
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
            timeout.CancelAfter(TimeSpan.FromSeconds(10));
            var line = await Handshake.ReadLineAsync(socket, timeout.Token);
            var sessionId = line is not null && line.StartsWith(Handshake.Magic, StringComparison.Ordinal)
                ? line[Handshake.Magic.Length..]
                : null;
            if (sessionId is null || !Handshake.IsValidSession(sessionId))
            {
                socket.Dispose();
                return;
            }

            await socket.SendAsync(Handshake.Ok, SocketFlags.None, timeout.Token);
            var session = sessions.GetOrAdd(sessionId, id => new Session(id));
            session.Offer(socket);
            Console.WriteLine($"h2spike server: uplink for session {sessionId} from {socket.RemoteEndPoint}");
        }
        catch (Exception)
        {
            socket.Dispose();
        }
    }

    /// <summary>One session: its dialed connections waiting to be used, and the HTTP/2 client that uses them.</summary>
    private sealed class Session : IDisposable
    {
        private readonly Channel<Socket> _dialed = Channel.CreateUnbounded<Socket>();
        private int _live;

        public Session(string id)
        {
            BaseUri = new Uri($"http://h2spike-{id}/");
            var handler = HttpRelay.NewHandler();
            // One HTTP/2 connection = the uplink; every request is a stream on it. When it ends, the handler calls
            // ConnectCallback again, which waits for the client's next dial.
            handler.EnableMultipleHttp2Connections = false;
            handler.PooledConnectionIdleTimeout = Timeout.InfiniteTimeSpan;
            handler.PooledConnectionLifetime = Timeout.InfiniteTimeSpan;
            handler.KeepAlivePingDelay = TimeSpan.FromSeconds(15);
            handler.KeepAlivePingTimeout = TimeSpan.FromSeconds(45);
            handler.KeepAlivePingPolicy = HttpKeepAlivePingPolicy.Always;
            handler.InitialHttp2StreamWindowSize = 524_288; // Tunnel2's initial per-stream window
            handler.ConnectCallback = ConnectAsync;
            Invoker = new HttpMessageInvoker(handler, disposeHandler: true);
        }

        public Uri BaseUri { get; }

        public HttpMessageInvoker Invoker { get; }

        /// <summary>Uplinks dialed and not yet closed (waiting or in use).</summary>
        public int Live => Volatile.Read(ref _live);

        public void Offer(Socket socket)
        {
            Interlocked.Increment(ref _live);
            _dialed.Writer.TryWrite(socket);
        }

        private async ValueTask<Stream> ConnectAsync(SocketsHttpConnectionContext context, CancellationToken cancellationToken)
        {
            var socket = await _dialed.Reader.ReadAsync(cancellationToken);
            return new UplinkStream(socket, () => Interlocked.Decrement(ref _live));
        }

        public void Dispose()
        {
            Invoker.Dispose();
            while (_dialed.Reader.TryRead(out var socket))
            {
                socket.Dispose();
            }
        }
    }

    /// <summary>The uplink socket as the handler's connection stream; counts the uplink gone when the handler drops it.</summary>
    private sealed class UplinkStream(Socket socket, Action onClosed) : NetworkStream(socket, ownsSocket: true)
    {
        private int _closed;

        protected override void Dispose(bool disposing)
        {
            if (Interlocked.Exchange(ref _closed, 1) == 0)
            {
                onClosed();
            }

            base.Dispose(disposing);
        }
    }
}
