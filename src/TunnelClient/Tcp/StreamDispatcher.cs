using Microsoft.Extensions.Options;
using Tunnel2.Loops.Guard;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Relay;

namespace Tunnel2.TunnelClient.Tcp;

/// <summary>
/// The streams the server opens, by kind: an HTTP exchange (a request head) goes to <see cref="BackendRelay"/>, a raw TCP
/// stream (a TcpOpen frame, version 5) to <see cref="TcpTargetRelay"/>. A kind this client does not serve is reset at once.
/// </summary>
public sealed class StreamDispatcher(IOptions<TunnelClientOptions> options, BackendRelay http, ITcpTargetRelay tcp, ILogger<StreamDispatcher> logger)
    : IUplinkStreamHandler
{
    private readonly bool _servesHttp = options.Value.Tcp.ServesHttp;
    private readonly bool _servesTcp = options.Value.Tcp.Target is not null;

    // Called by the uplink's reader, which may be the client's event loop: a refusal's line is written off it.
    private readonly ILogger _logger = new OffLoopLogger(logger);

    public void OnExchangeOpened(IHttpExchange exchange)
    {
        if (_servesHttp)
        {
            http.OnExchangeOpened(exchange);
            return;
        }

        TcpClientLog.HttpRefused(_logger, exchange.Id);
        Refuse(exchange);
    }

    public void OnByteStreamOpened(IByteStream stream)
    {
        if (_servesTcp)
        {
            tcp.OnStreamOpened(stream);
            return;
        }

        TcpClientLog.TcpRefused(_logger, stream.Id);
        Refuse(stream);
    }

    /// <summary>Nothing reached a backend: the server may try another client of the session.</summary>
    private static void Refuse(IStreamHandle stream)
    {
        stream.Reset(ProtocolErrorCode.BackendConnectFailed);
        stream.Dispose();
    }
}
