using System.IO.Pipelines;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>Whole exchanges between a server-role and a client-role uplink over in-memory pipes.</summary>
public sealed class StreamExchangeTests
{
    [Fact]
    public async Task Request_and_response_heads_and_bodies_arrive_intact()
    {
        await using var pair = UplinkPair.Start();
        var requestHead = new RequestHead("POST", "/x?q=%20", [new("Content-Type", "application/octet-stream"), new("X-Unicode", "✓ ü"), new("Set-Cookie", "a"), new("Set-Cookie", "b")]);
        byte[] requestBody = Pattern(300_000, seed: 1);
        byte[] responseBody = Pattern(200_000, seed: 2);

        UplinkStream server = pair.Server.OpenStreamOrFail(requestHead, endStream: false);
        var source = new Pipe();
        Task sendRequest = server.SendBodyAsync(source.Reader, CancellationToken.None);
        // The body is several windows long: the writer finishes only as the receiver reads, so it is not awaited here.
        Task writeRequest = WriteAndCompleteAsync(source.Writer, requestBody);

        UplinkStream client = await pair.Handler.NextAsync();
        Assert.Equal(server.Id, client.Id);
        Assert.True(client.RequestHasBody);
        Assert.NotNull(client.RequestHead);
        Assert.Equal("POST", client.RequestHead.Method);
        Assert.Equal("/x?q=%20", client.RequestHead.Target);
        Assert.Equal(requestHead.Headers, client.RequestHead.Headers);
        Assert.Equal(requestBody, await client.ReadAllAsync());
        await writeRequest.WithTimeout();
        await sendRequest.WithTimeout();

        var responseHead = new ResponseHead(201, [new("Content-Type", "text/plain; charset=utf-8"), new("X-Empty", "")]);
        client.SendResponseHead(responseHead, endStream: false);
        Task sendResponse = client.SendBodyAsync(PipeReader.Create(new MemoryStream(responseBody)), CancellationToken.None);

        ResponseHead received = await server.ReadResponseHeadAsync().WithTimeout();
        Assert.Equal(201, received.StatusCode);
        Assert.Equal(responseHead.Headers, received.Headers);
        Assert.Equal(responseBody, await server.ReadAllAsync());
        await sendResponse.WithTimeout();

        await Eventually.WaitUntilAsync(() => pair.Server.ActiveStreamCount == 0 && pair.Client.ActiveStreamCount == 0, "both ends forget the finished stream");
        Assert.Null(server.ResetCode);
        Assert.Null(client.ResetCode);
    }

    [Fact]
    public async Task A_request_body_from_a_stream_arrives_intact()
    {
        await using var pair = UplinkPair.Start();
        byte[] body = Pattern(150_000, seed: 3);

        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("PUT", "/upload", []), endStream: false);
        Task send = server.SendBodyAsync(PipeReader.Create(new MemoryStream(body)), CancellationToken.None);
        UplinkStream client = await pair.Handler.NextAsync();

        Assert.Equal(body, await client.ReadAllAsync());
        await send.WithTimeout();
    }

    [Fact]
    public async Task Without_bodies_both_inputs_complete_empty()
    {
        await using var pair = UplinkPair.Start();

        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/", []), endStream: true);
        Assert.False(client.RequestHasBody);
        Assert.Empty(await client.ReadAllAsync());

        client.SendResponseHead(new ResponseHead(204, []), endStream: true);

        Assert.Equal(204, (await server.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        Assert.Empty(await server.ReadAllAsync());
        await Eventually.WaitUntilAsync(() => pair.Server.ActiveStreamCount == 0 && pair.Client.ActiveStreamCount == 0, "both ends forget the finished stream");
    }

    [Fact]
    public async Task Many_concurrent_streams_with_bodies_larger_than_the_window_stay_separate()
    {
        const int Streams = 12;
        var settings = new UplinkSettings { InitialStreamWindow = 64 * 1024 };
        var echo = new RecordingStreamHandler
        {
            OnOpened = stream => _ = EchoAsync(stream),
        };
        await using var pair = UplinkPair.Start(settings, echo);

        var exchanges = new List<Task>();
        for (int i = 0; i < Streams; i++)
        {
            byte[] body = Pattern(100_000 + (i * 7_919), seed: 100 + i);
            UplinkStream stream = pair.Server.OpenStreamOrFail(new RequestHead("POST", $"/echo/{i}", [new("X-Index", $"{i}")]), endStream: false);
            exchanges.Add(ExchangeAsync(stream, body, i));
        }

        await Task.WhenAll(exchanges).WithTimeout();

        static async Task ExchangeAsync(UplinkStream stream, byte[] body, int index)
        {
            Task send = stream.SendBodyAsync(PipeReader.Create(new MemoryStream(body)), CancellationToken.None);
            ResponseHead head = await stream.ReadResponseHeadAsync().WithTimeout();
            Assert.Equal([new HeaderField("X-Echo", $"/echo/{index}")], head.Headers);
            Assert.Equal(body, await stream.ReadAllAsync());
            await send.WithTimeout();
        }

        static async Task EchoAsync(UplinkStream stream)
        {
            await Task.Yield();
            stream.SendResponseHead(new ResponseHead(200, [new("X-Echo", stream.RequestHead!.Target)]), endStream: false);
            var loop = new Pipe();
            Task copyIn = stream.CopyInputToAsync(loop.Writer, chunked: false, CancellationToken.None)
                .ContinueWith(t => loop.Writer.Complete(t.Exception), TaskScheduler.Default);
            await stream.SendBodyAsync(loop.Reader, CancellationToken.None);
            await copyIn;
        }
    }

    [Fact]
    public async Task Stream_ids_strictly_increase_on_both_ends()
    {
        await using var pair = UplinkPair.Start();
        var serverIds = new List<uint>();

        for (int i = 0; i < 10; i++)
        {
            serverIds.Add(pair.Server.OpenStreamOrFail(new RequestHead("GET", $"/{i}", []), endStream: true).Id);
        }

        for (int i = 0; i < 10; i++)
        {
            await pair.Handler.NextAsync();
        }

        Assert.Equal(Enumerable.Range(1, 10).Select(i => (uint)i), serverIds);
        Assert.Equal(serverIds, pair.Handler.Ids);
    }

    [Fact]
    public async Task Stream_ids_strictly_increase_when_opened_from_many_threads()
    {
        await using var pair = UplinkPair.Start();

        uint[] ids = await Task.WhenAll(Enumerable.Range(0, 200).Select(i => Task.Run(() =>
            pair.Server.OpenStreamOrFail(new RequestHead("GET", $"/{i}", []), endStream: true).Id))).WithTimeout();
        for (int i = 0; i < 200; i++)
        {
            await pair.Handler.NextAsync();
        }

        Assert.Equal(Enumerable.Range(1, 200).Select(i => (uint)i), ids.Order());
        IReadOnlyList<uint> seen = pair.Handler.Ids;
        Assert.Equal(200, seen.Count);
        for (int i = 1; i < seen.Count; i++)
        {
            Assert.True(seen[i] > seen[i - 1], $"the client saw stream {seen[i]} after {seen[i - 1]}");
        }

        Assert.True(pair.Client.IsOpen);
    }

    [Fact]
    public async Task A_head_too_large_for_one_frame_is_refused_locally_and_uses_no_stream_id()
    {
        var settings = new UplinkSettings { MaxFramePayload = 16 * 1024 };
        await using var pair = UplinkPair.Start(settings);
        var huge = new RequestHead("GET", "/", [new("X-Big", new string('x', 20_000))]);

        Assert.Equal(StreamOpenStatus.HeadTooLarge, pair.Server.TryOpenStream(huge, endStream: true, out _));
        UplinkStream next = pair.Server.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true);

        Assert.Equal(1u, next.Id);
        Assert.True(pair.Server.IsOpen);
        Assert.Equal(1u, (await pair.Handler.NextAsync()).Id);
    }

    [Fact]
    public async Task A_response_head_too_large_for_one_frame_is_refused_locally()
    {
        var settings = new UplinkSettings { MaxFramePayload = 16 * 1024 };
        await using var pair = UplinkPair.Start(settings);
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/", []), endStream: true);

        Assert.Throws<HeadTooLargeException>(() => client.SendResponseHead(new ResponseHead(200, [new("X-Big", new string('x', 20_000))]), endStream: true));
        client.SendResponseHead(new ResponseHead(200, []), endStream: true);

        Assert.Equal(200, (await server.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        Assert.True(pair.Client.IsOpen);
    }

    [Fact]
    public async Task Sending_after_the_end_is_refused()
    {
        await using var pair = UplinkPair.Start();
        (_, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/", []), endStream: true);

        client.SendResponseHead(new ResponseHead(200, []), endStream: false);
        client.SendEnd();

        Assert.Throws<InvalidOperationException>(() => client.SendEnd());
        Assert.Throws<InvalidOperationException>(() => client.SendResponseHead(new ResponseHead(200, []), endStream: true));
        Assert.Throws<InvalidOperationException>(() => client.SendPooledData(System.Buffers.ArrayPool<byte>.Shared.Rent(1), 1, endStream: false));
    }

    private static async Task WriteAndCompleteAsync(PipeWriter writer, byte[] body)
    {
        await writer.WriteAsync(body);
        await writer.CompleteAsync();
    }

    internal static byte[] Pattern(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }
}
