using System.Buffers;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Tcp;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Raw TCP streams (version 5): the server opens one per connection to a session's public TCP port with a TcpOpen
/// frame instead of a request head; from then on both directions carry bytes as Data frames under the same windows,
/// END_STREAM is a half-close and Reset an abort, as on an upgraded stream.
/// </summary>
public sealed partial class Uplink
{
    /// <summary>Whether this uplink may carry TCP streams (both ends speak version 5).</summary>
    public bool CarriesTcp => Settings.ProtocolVersion >= Handshake.HandshakeProtocol.TcpVersion;

    /// <summary>Opens a TCP stream for a caller of the session's TCP port (server side); as <see cref="TryOpenStream"/>.</summary>
    /// <exception cref="InvalidOperationException">Called on a client-role uplink, or one below version 5.</exception>
    public StreamOpenStatus TryOpenTcpStream(TcpStreamOpen open, out IByteStream? stream)
    {
        if (Role != UplinkRole.Server || !CarriesTcp)
        {
            throw new InvalidOperationException("Only the server opens TCP streams, on a version-5 uplink.");
        }

        int length = open.EncodedLength;
        byte[] pooled = ArrayPool<byte>.Shared.Rent(length);
        open.Write(pooled);
        StreamOpenStatus status = TryOpen(FrameType.TcpOpen, FrameFlags.None, pooled, length, open, out UplinkStream? opened);
        stream = opened;
        return status;
    }

    private void AcceptTcpStream(in FrameHeader header, in ReadOnlySequence<byte> payload)
    {
        if (Role != UplinkRole.Client || !CarriesTcp)
        {
            throw new ProtocolViolationException("A TcpOpen frame goes from the server to a version-5 client.");
        }

        if (header.StreamId == 0 || header.StreamId <= _streams.LastStreamId || header.EndStream)
        {
            throw new ProtocolViolationException($"TcpOpen reuses or goes back to stream id {header.StreamId}, or ends it at once.");
        }

        TcpStreamOpen open = TcpStreamOpen.Read(payload);
        OnPeerOpened(UplinkStream.Start(this, header.StreamId, requestHead: null, requestHasBody: true, tcp: open), header, mayStartOnReader: false);
    }
}
