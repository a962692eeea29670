using System.Net.Sockets;
using System.Runtime.CompilerServices;
using Tunnel2.Protocol.Frames;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.TunnelClient.Relay.Pipeline;

namespace Tunnel2.TunnelClient.Relay.Exchange;

/// <summary>
/// The HTTP/1 exchange step, on the connection the attempt leased: writes the request head (with the <c>Host</c> of
/// <c>--host-header</c>), starts the request body on its way (it keeps flowing while the answer comes back, full
/// duplex), and reads the backend's response head. A failure becomes a value that says whether the request may have
/// reached the backend, for the retry policy to judge.
/// </summary>
internal sealed class Http1Exchange
{
    private const string ClosedWithoutAnswering = "the backend closed the connection without answering";

    private readonly BackendSet _backends;

    public Http1Exchange(BackendSet backends) => _backends = backends;

    /// <returns><see cref="AttemptOutcome.Answered"/> with <see cref="RelayExchange.Response"/> set, or how it failed.</returns>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<AttemptResult> SendAndReadHeadAsync(RelayExchange exchange)
    {
        BackendConnection connection = exchange.Connection!;
        if (!TryWriteHead(exchange, connection, out bool chunked, out RelayFailure invalid))
        {
            return AttemptResult.Failed(invalid);
        }

        exchange.RequestBody = exchange.HasBody
            ? exchange.Stream.CopyInputToAsync(connection.Output, chunked, exchange.Observer?.RequestBodyTap, CancellationToken.None)
            : connection.Output.FlushAsync(CancellationToken.None).AsTask();
        try
        {
            exchange.Response = await ResponseHeadReader.ReadAsync(connection.Input, connection.TakeReadAhead(), exchange.IsHead, exchange.IsUpgrade, CancellationToken.None);
        }
        catch (Exception ex) when (!exchange.Stream.IsAborted && ex is IOException or InvalidDataException or SocketException)
        {
            PumpTasks.Observe(exchange.RequestBody);

            // A malformed answer is the backend's fault but not unreachability: it must not count towards passing this
            // client over (that would turn one bad answer among good ones into 503s for all).
            return new AttemptResult(AttemptOutcome.FailedBeforeAnswer, ex is InvalidDataException
                ? new RelayFailure(ProtocolErrorCode.BackendAborted, "backend-malformed", ex.Message)
                : new RelayFailure(ProtocolErrorCode.BackendUnreachable, "backend-failed", ex.Message));
        }

        if (exchange.Response is null)
        {
            PumpTasks.Observe(exchange.RequestBody);
            return exchange.Stream.IsAborted
                ? AttemptResult.Done // the end of stream was the abort listener's doing
                : new AttemptResult(AttemptOutcome.ClosedWithoutAnswer,
                    new RelayFailure(ProtocolErrorCode.BackendUnreachable, "backend-closed", ClosedWithoutAnswering));
        }

        return AttemptResult.Answered;
    }

    /// <summary>Writes the request line and fields; false (nothing written) when the head would change the backend's framing.</summary>
    private bool TryWriteHead(RelayExchange exchange, BackendConnection connection, out bool chunked, out RelayFailure failure)
    {
        exchange.Host = _backends.HostHeader.For(exchange.Request.Headers, exchange.Backend.Host);
        try
        {
            chunked = RequestWriter.WriteHead(connection.Output, exchange.Request, exchange.Host, exchange.HasBody, exchange.IsUpgrade);
            failure = default;
            return true;
        }
        catch (InvalidDataException ex)
        {
            chunked = false;
            failure = new RelayFailure(ProtocolErrorCode.ProtocolError, "invalid-request-head", ex.Message);
            return false;
        }
    }
}
