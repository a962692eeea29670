using System.Net;
using System.Net.Sockets;
using System.Text;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;

namespace Tunnel2.Spikes.Http2Uplink;

/// <summary>
/// The private side: dials the server's tunnel port, logs in, and hands the connected socket to Kestrel as an
/// inbound connection on an HTTP/2-only (prior knowledge) endpoint; Kestrel's app relays each request (one HTTP/2
/// stream) to the backend. When the connection ends, the listener dials again (fixed 250 ms pause on failure).
/// </summary>
internal static class SpikeClient
{
    public static async Task<int> RunAsync(DnsEndPoint server, string session, Uri backend)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        builder.Services.AddSingleton<IConnectionListenerFactory, UplinkListenerFactory>();
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.AddServerHeader = false;
            kestrel.Limits.MaxRequestBodySize = null;
            kestrel.Limits.MinRequestBodyDataRate = null;
            kestrel.Limits.MinResponseDataRate = null;
            // An idle uplink stays up. Not Timeout.InfiniteTimeSpan: Kestrel's HTTP/2 connection takes its negative Ticks
            // as an already expired keep-alive and closes the connection at the next heartbeat (seen here).
            kestrel.Limits.KeepAliveTimeout = TimeSpan.FromDays(1);
            kestrel.Limits.Http2.MaxStreamsPerConnection = 10_000;      // Tunnel2's MaxStreamsPerUplink
            kestrel.Listen(new UplinkEndPoint(server, session), listen => listen.Protocols = HttpProtocols.Http2);
        });
        var app = builder.Build();

        var invoker = new HttpMessageInvoker(HttpRelay.NewHandler(), disposeHandler: true);
        var backendBase = backend.GetLeftPart(UriPartial.Authority);
        app.Run(context => HttpRelay.RelayAsync(
            context,
            invoker,
            new Uri(backendBase + context.Request.Path.Value + context.Request.QueryString.Value),
            HttpVersion.Version11,
            HttpVersionPolicy.RequestVersionOrLower,
            addForwarded: null));

        Console.WriteLine($"h2spike client: session {session}, server {server.Host}:{server.Port}, backend {backendBase}");
        await app.RunAsync();
        invoker.Dispose();
        return 0;
    }

    /// <summary>The "address" Kestrel binds: where to dial, and which session to name.</summary>
    private sealed class UplinkEndPoint(DnsEndPoint server, string session) : EndPoint
    {
        public DnsEndPoint Server { get; } = server;

        public string Session { get; } = session;

        public override string ToString() => $"h2spike://{Server.Host}:{Server.Port}/{Session}";
    }

    private sealed class UplinkListenerFactory(ILoggerFactory loggerFactory)
        : IConnectionListenerFactory, IConnectionListenerFactorySelector
    {
        public bool CanBind(EndPoint endpoint) => endpoint is UplinkEndPoint;

        public ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken cancellationToken)
        {
            var contexts = new SocketConnectionContextFactory(
                new SocketConnectionFactoryOptions(), loggerFactory.CreateLogger("H2Spike.Uplink"));
            return ValueTask.FromResult<IConnectionListener>(new UplinkListener((UplinkEndPoint)endpoint, contexts));
        }
    }

    /// <summary>"Accepts" by dialing: one uplink at a time; the next AcceptAsync waits for it to close, then re-dials.</summary>
    private sealed class UplinkListener(UplinkEndPoint endpoint, SocketConnectionContextFactory contexts) : IConnectionListener
    {
        private readonly CancellationTokenSource _unbound = new();
        private ConnectionContext? _current;

        public EndPoint EndPoint => endpoint;

        public async ValueTask<ConnectionContext?> AcceptAsync(CancellationToken cancellationToken = default)
        {
            using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _unbound.Token);
            try
            {
                if (_current is { } current)
                {
                    using var closed = CancellationTokenSource.CreateLinkedTokenSource(stop.Token, current.ConnectionClosed);
                    await Task.Delay(Timeout.Infinite, closed.Token).ContinueWith(static _ => { }, TaskScheduler.Default);
                    stop.Token.ThrowIfCancellationRequested();
                    Console.WriteLine("h2spike client: uplink closed, dialing again");
                }

                while (true)
                {
                    var socket = await TryDialAsync(stop.Token);
                    if (socket is not null)
                    {
                        Console.WriteLine($"h2spike client: uplink up ({socket.LocalEndPoint} -> {socket.RemoteEndPoint})");
                        return _current = contexts.Create(socket);
                    }

                    await Task.Delay(250, stop.Token);
                }
            }
            catch (OperationCanceledException)
            {
                return null; // Kestrel is unbinding
            }
        }

        private async Task<Socket?> TryDialAsync(CancellationToken cancellationToken)
        {
            var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            try
            {
                using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
                timeout.CancelAfter(TimeSpan.FromSeconds(10));
                await socket.ConnectAsync(endpoint.Server, timeout.Token);
                await socket.SendAsync(Encoding.ASCII.GetBytes(Handshake.Magic + endpoint.Session + "\r\n"),
                    SocketFlags.None, timeout.Token);
                var answer = await Handshake.ReadLineAsync(socket, timeout.Token);
                if (answer == "OK")
                {
                    return socket;
                }

                Console.WriteLine($"h2spike client: login refused ({answer ?? "connection closed"})");
            }
            catch (Exception ex) when (!cancellationToken.IsCancellationRequested)
            {
                Console.WriteLine($"h2spike client: dial failed: {ex.Message}");
            }

            socket.Dispose();
            cancellationToken.ThrowIfCancellationRequested();
            return null;
        }

        public ValueTask UnbindAsync(CancellationToken cancellationToken = default)
        {
            _unbound.Cancel();
            return ValueTask.CompletedTask;
        }

        public ValueTask DisposeAsync()
        {
            _unbound.Cancel();
            _unbound.Dispose();
            contexts.Dispose();
            return ValueTask.CompletedTask;
        }
    }
}
