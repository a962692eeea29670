using System.Buffers;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Takes a stream's inbound bytes straight from the uplink reader's buffer, instead of the stream's inbound pipe (issue 52
/// item 3: no copy the kernel does not force). Called on the reader's thread, in order, and must not block: it sends
/// what its destination takes now and keeps the rest, and reports each byte its destination took with
/// <see cref="IByteStream.ReportInboundConsumed"/>, which is what returns the peer's credit.
/// </summary>
public interface IStreamInboundSink
{
    /// <summary>The payload of one Data frame: valid only during the call.</summary>
    void OnInboundData(in ReadOnlySequence<byte> payload);

    /// <summary>The peer's END_STREAM (a half-close), after its last data; not called for a reset (see the abort listener).</summary>
    void OnInboundEnd();
}
