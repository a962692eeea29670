using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Tcp;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>
/// Opens streams through the real API, <see cref="Uplink.TryOpenStream"/> and <see cref="Uplink.TryOpenTcpStream"/>,
/// and gives tests the stream object behind the handle (internal to the protocol library), so they can look at its state.
/// </summary>
internal static class UplinkOpening
{
    /// <summary>Opens a stream on a server-role uplink; the test fails, naming the status, when the uplink refuses it.</summary>
    public static UplinkStream OpenStreamOrFail(this Uplink uplink, RequestHead head, bool endStream)
    {
        StreamOpenStatus status = uplink.TryOpenStream(head, endStream, out UplinkStream? stream);
        Assert.Equal(StreamOpenStatus.Opened, status);
        return stream!;
    }

    /// <summary><see cref="Uplink.TryOpenStream"/>, its handle seen as the stream object.</summary>
    public static StreamOpenStatus TryOpenStream(this Uplink uplink, RequestHead head, bool endStream, out UplinkStream? stream)
    {
        StreamOpenStatus status = uplink.TryOpenStream(head, endStream, out IHttpExchange? exchange);
        stream = (UplinkStream?)exchange;
        return status;
    }

    /// <summary><see cref="Uplink.TryOpenTcpStream"/>, its handle seen as the stream object.</summary>
    public static StreamOpenStatus TryOpenTcpStream(this Uplink uplink, TcpStreamOpen open, out UplinkStream? stream)
    {
        StreamOpenStatus status = uplink.TryOpenTcpStream(open, out IByteStream? handle);
        stream = (UplinkStream?)handle;
        return status;
    }
}
