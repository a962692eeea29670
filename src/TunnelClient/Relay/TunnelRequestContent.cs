using System.Net;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Relay;

/// <summary>The request body as it arrives over the stream, handed to the backend chunk by chunk; never buffered whole.</summary>
internal sealed class TunnelRequestContent(UplinkStream stream) : HttpContent
{
    protected override Task SerializeToStreamAsync(Stream target, TransportContext? context) =>
        stream.CopyInputToAsync(target, CancellationToken.None);

    protected override Task SerializeToStreamAsync(Stream target, TransportContext? context, CancellationToken cancellationToken) =>
        stream.CopyInputToAsync(target, cancellationToken);

    protected override bool TryComputeLength(out long length)
    {
        length = 0;
        return false; // Content-Length, when the caller sent one, is set as a header; otherwise the body goes chunked.
    }
}
