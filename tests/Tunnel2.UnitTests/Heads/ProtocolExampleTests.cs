using System.Buffers;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Heads;

/// <summary>The worked example of docs/protocol.md §3, byte for byte.</summary>
public sealed class ProtocolExampleTests
{
    private const string DocumentedFrame =
        "0000001F" + "01" + "01" + "00000001"
        + "03474554"
        + "0E2F6C6F6164746573742F70696E67"
        + "01"
        + "06416363657074" + "032A2F2A";

    [Fact]
    public void Encoding_the_documented_request_gives_the_documented_bytes()
    {
        byte[] payload = FrameBytes.Encode(new RequestHead("GET", "/loadtest/ping", [new("Accept", "*/*")]));
        byte[] frame = FrameBytes.Frame(FrameType.RequestHead, FrameFlags.EndStream, 1, payload);

        Assert.Equal(DocumentedFrame, FrameBytes.Hex(frame));
    }

    [Fact]
    public void Decoding_the_documented_bytes_gives_the_documented_request()
    {
        var buffer = new ReadOnlySequence<byte>(Convert.FromHexString(DocumentedFrame));

        Assert.True(FrameReader.TryReadFrame(ref buffer, 1024, out FrameHeader header, out ReadOnlySequence<byte> payload));
        RequestHead head = HeadCodec.ReadRequestHead(payload);

        Assert.Equal(new FrameHeader(31, FrameType.RequestHead, FrameFlags.EndStream, 1), header);
        Assert.Equal("GET", head.Method);
        Assert.Equal("/loadtest/ping", head.Target);
        Assert.Equal([new HeaderField("Accept", "*/*")], head.Headers);
    }
}
