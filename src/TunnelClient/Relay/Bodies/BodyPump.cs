using System.Net.Sockets;
using System.Runtime.CompilerServices;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.TunnelClient.Relay.Pipeline;

namespace Tunnel2.TunnelClient.Relay.Bodies;

/// <summary>
/// The body step, after the response head went up: the response body comes down from the backend in its framing
/// (<see cref="ResponseBodyPump"/>) while the request body (started by the exchange step) finishes going to it. It
/// decides whether the connection may be reused: an answer that came before the whole upload leaves it mid-request.
/// </summary>
internal static class BodyPump
{
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public static async ValueTask<AttemptResult> PumpAsync(RelayExchange exchange)
    {
        BackendResponseHead response = exchange.Response!;
        if (response.Framing != BodyFraming.None)
        {
            BackendConnection connection = exchange.Connection!;
            try
            {
                if (ResponseBodyPump.MayTakeLong(response))
                {
                    await connection.ReleaseWriteBufferAsync();
                }

                await ResponseBodyPump.SendAsync(exchange.Stream, connection.Input, connection.Stream, response, exchange.Observer?.ResponseBodyTap, CancellationToken.None);
            }
            catch (Exception ex) when (!exchange.Stream.IsAborted && ex is IOException or InvalidDataException or SocketException
                                       && ex is not UplinkClosedException and not StreamResetException)
            {
                PumpTasks.Observe(exchange.RequestBody);
                return AttemptResult.Failed(new RelayFailure(ProtocolErrorCode.BackendAborted, "backend-aborted", $"response body cut short: {ex.Message}"));
            }
        }

        Task requestBody = exchange.RequestBody;
        exchange.CloseCause = response.CloseCause ?? (requestBody.IsCompletedSuccessfully ? null : CloseCause.RequestBodyUnfinished);
        if (!requestBody.IsCompleted)
        {
            PumpTasks.Observe(requestBody);
        }

        return AttemptResult.Done;
    }
}
