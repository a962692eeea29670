using System.Buffers;
using Tunnel2.Protocol.Heads;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Heads;

public sealed class HeadCodecRoundTripTests
{
    internal static RequestHead SampleRequest() => new("POST", "/loadtest/echo?q=%20x&y=%E2%9C%93",
    [
        new("Content-Type", "application/json; charset=utf-8"),
        new("Set-Cookie", "a=1"),
        new("X-Empty", ""),
        new("Set-Cookie", "b=2"),
        new("X-Unicode", "héllo ✓ 😀 日本語"),
    ]);

    internal static ResponseHead SampleResponse() => new(201,
    [
        new("Set-Cookie", "first=1; Path=/"),
        new("Set-Cookie", "second=2; HttpOnly"),
        new("Content-Length", "0"),
        new("X-Empty", ""),
        new("X-Unicode", "Grüße → ✓"),
    ]);

    [Fact]
    public void A_request_head_round_trips_with_unicode_empty_and_repeated_headers_in_order()
    {
        RequestHead original = SampleRequest();

        RequestHead read = HeadCodec.ReadRequestHead(new ReadOnlySequence<byte>(FrameBytes.Encode(original)));

        AssertSame(original, read);
        Assert.Equal(["a=1", "b=2"], read.Headers.Where(h => h.Name == "Set-Cookie").Select(h => h.Value));
    }

    [Fact]
    public void A_response_head_round_trips_with_unicode_empty_and_repeated_headers_in_order()
    {
        ResponseHead original = SampleResponse();

        ResponseHead read = HeadCodec.ReadResponseHead(new ReadOnlySequence<byte>(FrameBytes.Encode(original)));

        AssertSame(original, read);
        Assert.Equal(["first=1; Path=/", "second=2; HttpOnly"], read.Headers.Where(h => h.Name == "Set-Cookie").Select(h => h.Value));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(HeadCodec.MaxHeaderCount)]
    public void A_request_head_round_trips_with_any_allowed_header_count(int count)
    {
        var original = new RequestHead("GET", "/", ManyHeaders(count));

        RequestHead read = HeadCodec.ReadRequestHead(new ReadOnlySequence<byte>(FrameBytes.Encode(original)));

        AssertSame(original, read);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(HeadCodec.MaxHeaderCount)]
    public void A_response_head_round_trips_with_any_allowed_header_count(int count)
    {
        var original = new ResponseHead(200, ManyHeaders(count));

        ResponseHead read = HeadCodec.ReadResponseHead(new ReadOnlySequence<byte>(FrameBytes.Encode(original)));

        AssertSame(original, read);
    }

    [Theory]
    [InlineData(100)]
    [InlineData(200)]
    [InlineData(404)]
    [InlineData(999)]
    public void Status_codes_from_100_to_999_round_trip(int status)
    {
        ResponseHead read = HeadCodec.ReadResponseHead(new ReadOnlySequence<byte>(FrameBytes.Encode(new ResponseHead(status, []))));

        Assert.Equal(status, read.StatusCode);
        Assert.Empty(read.Headers);
    }

    [Theory]
    [InlineData("GET")]
    [InlineData("POST")]
    [InlineData("PUT")]
    [InlineData("DELETE")]
    [InlineData("HEAD")]
    [InlineData("PATCH")]
    [InlineData("OPTIONS")]
    [InlineData("PROPFIND")]
    [InlineData("get")]
    [InlineData("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345")]
    public void Known_custom_and_32_byte_methods_round_trip(string method)
    {
        RequestHead read = HeadCodec.ReadRequestHead(new ReadOnlySequence<byte>(FrameBytes.Encode(new RequestHead(method, "/x", []))));

        Assert.Equal(method, read.Method);
    }

    [Fact]
    public void Long_strings_with_multi_byte_varint_lengths_round_trip()
    {
        string target = "/" + new string('t', 200);
        string value = string.Concat(Enumerable.Repeat("✓", 20_000)); // 60,000 UTF-8 bytes: a 3-byte length
        var original = new RequestHead("GET", target, [new("X-Big", value)]);

        RequestHead read = HeadCodec.ReadRequestHead(new ReadOnlySequence<byte>(FrameBytes.Encode(original)));

        AssertSame(original, read);
    }

    [Fact]
    public void A_request_head_reads_the_same_from_segments_cut_anywhere()
    {
        RequestHead original = SampleRequest();
        byte[] bytes = FrameBytes.Encode(original);

        for (int cut = 0; cut <= bytes.Length; cut++)
        {
            AssertSame(original, HeadCodec.ReadRequestHead(Sequences.SplitAt(bytes, cut)));
        }

        AssertSame(original, HeadCodec.ReadRequestHead(Sequences.Chunked(bytes, 1)));
    }

    [Fact]
    public void A_response_head_reads_the_same_from_segments_cut_anywhere()
    {
        ResponseHead original = SampleResponse();
        byte[] bytes = FrameBytes.Encode(original);

        for (int cut = 0; cut <= bytes.Length; cut++)
        {
            AssertSame(original, HeadCodec.ReadResponseHead(Sequences.SplitAt(bytes, cut)));
        }

        AssertSame(original, HeadCodec.ReadResponseHead(Sequences.Chunked(bytes, 1)));
    }

    [Fact]
    public void Invalid_utf8_is_replaced_not_thrown()
    {
        // method "GET", target "/" followed by the lone byte 0xFF, one header whose value is a truncated 3-byte sequence.
        byte[] bytes = [3, (byte)'G', (byte)'E', (byte)'T', 2, (byte)'/', 0xFF, 1, 1, (byte)'X', 2, 0xE2, 0x9C];

        RequestHead read = HeadCodec.ReadRequestHead(new ReadOnlySequence<byte>(bytes));

        Assert.Equal("/\uFFFD", read.Target);
        Assert.Contains('\uFFFD', read.Headers[0].Value);
    }

    internal static List<HeaderField> ManyHeaders(int count)
    {
        var headers = new List<HeaderField>(count);
        for (int i = 0; i < count; i++)
        {
            headers.Add(new HeaderField($"X-Header-{i % 10}", $"value {i}"));
        }

        return headers;
    }

    internal static void AssertSame(RequestHead expected, RequestHead actual)
    {
        Assert.Equal(expected.Method, actual.Method);
        Assert.Equal(expected.Target, actual.Target);
        Assert.Equal(expected.Headers, actual.Headers);
    }

    internal static void AssertSame(ResponseHead expected, ResponseHead actual)
    {
        Assert.Equal(expected.StatusCode, actual.StatusCode);
        Assert.Equal(expected.Headers, actual.Headers);
    }
}
