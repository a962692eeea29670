using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>Opens streams through the real API, <see cref="Uplink.TryOpenStream"/>, for tests that expect it to succeed.</summary>
internal static class UplinkOpening
{
    /// <summary>Opens a stream on a server-role uplink; the test fails, naming the status, when the uplink refuses it.</summary>
    public static UplinkStream OpenStreamOrFail(this Uplink uplink, RequestHead head, bool endStream)
    {
        StreamOpenStatus status = uplink.TryOpenStream(head, endStream, out UplinkStream? stream);
        Assert.Equal(StreamOpenStatus.Opened, status);
        return stream!;
    }
}
