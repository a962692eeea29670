using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.IdleSessions;

/// <summary>What every idle uplink is given to handle the streams the server opens: none comes, and one that did is refused.</summary>
internal sealed class RefusingHandler : IUplinkStreamHandler
{
    public void OnExchangeOpened(IHttpExchange exchange) => Refuse(exchange);

    public void OnByteStreamOpened(IByteStream stream) => Refuse(stream);

    private static void Refuse(IStreamHandle stream)
    {
        stream.Reset(ProtocolErrorCode.BackendConnectFailed);
        stream.Dispose();
    }
}
