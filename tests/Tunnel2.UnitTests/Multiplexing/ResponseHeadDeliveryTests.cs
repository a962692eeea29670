using System.IO.Pipelines;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// The server's reader hands a response head to its owner only after the batch of frames it came in: a small answer
/// whose body came in the same batch is whole when the owner sees the head (and is relayed on the reader's thread,
/// which docs/benchmarks/2026-11-27-handoffs.md counts); a longer answer's head is not held back until its body ends.
/// </summary>
public sealed class ResponseHeadDeliveryTests
{
    private static readonly RequestHead Get = new("GET", "/", []);

    [Theory]
    [InlineData(1)]
    [InlineData(0)]
    public async Task The_head_of_a_small_answer_that_came_with_its_body_is_handed_over_with_the_whole_body(int inlineAnswers)
    {
        await using var peer = RawPeer.ForServer(new UplinkSettings { InlineAnswersPerBatch = inlineAnswers });
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Get, endStream: true);
        Task<(long Length, bool Ended)> seenWithHead = stream.ReadResponseHeadAsync().ContinueWith(
            _ => stream.Input.TryRead(out ReadResult buffered) ? (buffered.Buffer.Length, buffered.IsCompleted) : (-1L, false),
            TaskContinuationOptions.ExecuteSynchronously);

        // Head and body in one write: one batch for the reader.
        await peer.SendAsync([
            .. FrameBytes.Frame(FrameType.ResponseHead, 1, FrameBytes.Encode(new ResponseHead(200, []))),
            .. FrameBytes.Frame(FrameType.Data, FrameFlags.EndStream, 1, "pong"u8)]);

        Assert.Equal((4L, true), await seenWithHead.WithTimeout());
        Assert.Equal(200, (await stream.ReadResponseHeadAsync()).StatusCode);
        stream.Dispose();
    }

    [Fact]
    public async Task The_head_of_an_answer_whose_body_goes_on_is_handed_over_before_the_body_ends()
    {
        await using var peer = RawPeer.ForServer();
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Get, endStream: true);
        await peer.SendAsync([
            .. FrameBytes.Frame(FrameType.ResponseHead, 1, FrameBytes.Encode(new ResponseHead(200, []))),
            .. FrameBytes.Frame(FrameType.Data, 1, "first"u8)]);

        Assert.Equal(200, (await stream.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        Assert.Null(stream.ResetCode);

        // The rest of the body still arrives after the head was handed over.
        await peer.SendFrameAsync(FrameType.Data, FrameFlags.EndStream, 1, "second"u8.ToArray());
        using var received = new MemoryStream();
        await stream.CopyInputToAsync(PipeWriter.Create(received), chunked: false, CancellationToken.None).WithTimeout();
        Assert.Equal("firstsecond"u8.ToArray(), received.ToArray());
        stream.Dispose();
    }

    [Fact]
    public async Task A_head_followed_by_a_reset_in_the_same_batch_is_still_handed_over_and_the_body_fails_with_the_code()
    {
        await using var peer = RawPeer.ForServer();
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Get, endStream: true);
        await peer.SendAsync([
            .. FrameBytes.Frame(FrameType.ResponseHead, 1, FrameBytes.Encode(new ResponseHead(200, []))),
            .. FrameBytes.Frame(FrameType.Reset, 1, FrameBytes.U32((uint)ProtocolErrorCode.BackendAborted))]);

        Assert.Equal(200, (await stream.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        var error = await Assert.ThrowsAsync<StreamResetException>(
            () => stream.CopyInputToAsync(PipeWriter.Create(Stream.Null), chunked: false, CancellationToken.None).WithTimeout());
        Assert.Equal(ProtocolErrorCode.BackendAborted, error.ErrorCode);
        stream.Dispose();
    }
}
