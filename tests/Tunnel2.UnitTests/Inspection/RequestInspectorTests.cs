using System.Text;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Inspection;

namespace Tunnel2.UnitTests.Inspection;

/// <summary>The inspector's memory in isolation: body caps, the ring of the last N, the live feed, and what the API shows.</summary>
public sealed class RequestInspectorTests
{
    private static RequestInspector Inspector(int capacity = 3, int bodyLimit = 8, bool reveal = false) =>
        new(Options.Create(new TunnelClientOptions { Inspector = { Capacity = capacity, BodyLimit = bodyLimit, RevealSecrets = reveal } }), TimeProvider.System);

    [Fact]
    public void A_body_keeps_its_first_bytes_up_to_the_limit_counts_them_all_and_takes_nothing_once_frozen()
    {
        var body = new BodyCapture(limit: 8);
        body.Observe("hello"u8);
        body.Observe(" world"u8);

        CapturedBody? captured = body.Freeze();
        body.Observe("late"u8);

        Assert.NotNull(captured);
        Assert.Equal("hello wo", Encoding.ASCII.GetString(captured.Bytes));
        Assert.Equal(11, captured.Size);
        Assert.True(captured.Truncated);
        Assert.Equal(11, body.Freeze()!.Size);
        Assert.Null(new BodyCapture(limit: 8).Freeze()); // no byte passed: no body
    }

    [Fact]
    public void The_ring_keeps_the_last_N_newest_first_and_a_capture_is_recorded_once()
    {
        RequestInspector inspector = Inspector(capacity: 3);
        for (int i = 1; i <= 5; i++)
        {
            ExchangeCapture capture = inspector.Begin(new RequestHead("GET", $"/{i}", []));
            capture.OnResponseHead(200, []);
            Assert.NotNull(capture.Complete());
            Assert.Null(capture.Complete());
        }

        List<InspectedExchange> kept = inspector.Snapshot();
        Assert.Equal(["/5", "/4", "/3"], kept.Select(exchange => exchange.Target));
        Assert.Equal([5L, 4L, 3L], kept.Select(exchange => exchange.Id));
        Assert.Null(inspector.Find(2));
        Assert.Equal("/4", inspector.Find(4)!.Target);

        inspector.Clear();
        Assert.Empty(inspector.Snapshot());
    }

    [Fact]
    public async Task A_watcher_hears_each_new_exchange_and_a_clear_until_it_stops_watching()
    {
        RequestInspector inspector = Inspector();
        using var stop = new CancellationTokenSource();
        System.Threading.Channels.ChannelReader<InspectorEvent> feed = inspector.Watch(stop.Token);

        inspector.Begin(new RequestHead("GET", "/a", [])).Complete();
        inspector.Clear();
        await stop.CancelAsync();

        Assert.Equal("/a", (await feed.ReadAsync()).Exchange!.Target);
        Assert.Same(InspectorEvent.Cleared, await feed.ReadAsync());
        Assert.False(await feed.WaitToReadAsync());
    }

    [Fact]
    public void The_request_head_is_copied_so_fields_the_relay_adds_later_are_not_shown()
    {
        RequestInspector inspector = Inspector();
        var head = new RequestHead("GET", "/", [new HeaderField("Accept", "*/*")]);
        ExchangeCapture capture = inspector.Begin(head);
        head.Headers.Add(new HeaderField("traceparent", "00-added-by-the-relay"));

        Assert.Equal([new HeaderField("Accept", "*/*")], capture.Complete()!.RequestHeaders);
    }

    [Theory]
    [InlineData(false, "[redacted]")]
    [InlineData(true, "Bearer secret")]
    public void Secrets_are_redacted_in_what_is_shown_unless_revealed_and_kept_for_replay(bool reveal, string shown)
    {
        RequestInspector inspector = Inspector(reveal: reveal);
        InspectedExchange exchange = inspector.Begin(new RequestHead("GET", "/", [new HeaderField("authorization", "Bearer secret"), new HeaderField("Accept", "*/*")])).Complete()!;

        ExchangeView view = InspectorViews.Of(exchange, inspector.RevealSecrets);

        Assert.Equal([new HeaderView("authorization", shown), new HeaderView("Accept", "*/*")], view.Request.Headers);
        Assert.Equal("Bearer secret", exchange.RequestHeaders[0].Value);
    }

    [Fact]
    public void Bodies_show_as_text_when_UTF8_even_when_cut_inside_a_character_and_as_base64_when_binary_or_compressed()
    {
        byte[] euro = Encoding.UTF8.GetBytes("€€€"); // 9 bytes; a limit of 8 cuts the last character
        var cut = new CapturedBody(euro[..8], euro.Length);
        Assert.StartsWith("€€", InspectorViews.Body(cut, [])!.Text, StringComparison.Ordinal);

        var binary = new CapturedBody([0x00, 0xFF, 0x10], 3);
        BodyView binaryView = InspectorViews.Body(binary, [new HeaderField("Content-Type", "application/octet-stream")])!;
        Assert.Null(binaryView.Text);
        Assert.Equal("AP8Q", binaryView.Base64);

        var gzipped = new CapturedBody(Encoding.ASCII.GetBytes("looks like text"), 15);
        BodyView compressed = InspectorViews.Body(gzipped, [new HeaderField("Content-Type", "text/plain"), new HeaderField("Content-Encoding", "gzip")])!;
        Assert.Null(compressed.Text);

        BodyView json = InspectorViews.Body(new CapturedBody("{\"a\":1}"u8.ToArray(), 7), [new HeaderField("Content-Type", "application/json")])!;
        Assert.Equal(("{\"a\":1}", "application/json", false), (json.Text, json.ContentType, json.Truncated));
    }

    [Fact]
    public void The_HAR_export_lists_entries_oldest_first_with_a_status_0_response_for_one_never_answered()
    {
        RequestInspector inspector = Inspector();
        ExchangeCapture answered = inspector.Begin(new RequestHead("GET", "/ok?x=1", []));
        answered.SetBackend("http://127.0.0.1:5000");
        answered.OnResponseHead(404, [new HeaderField("Content-Type", "text/plain")]);
        answered.ResponseBody.Observe("missing"u8);
        answered.Complete();
        ExchangeCapture failed = inspector.Begin(new RequestHead("GET", "/down", []));
        failed.Fail("backend-unreachable: refused");
        failed.Complete();

        HarDocument har = HarExport.Of(inspector.Snapshot(), revealSecrets: false);

        Assert.Equal(["http://127.0.0.1:5000/ok?x=1", "http://backend/down"], har.Log.Entries.Select(entry => entry.Request.Url));
        Assert.Equal((404, "Not Found", "missing"), (har.Log.Entries[0].Response.Status, har.Log.Entries[0].Response.StatusText, har.Log.Entries[0].Response.Content.Text));
        Assert.Equal([new HarNameValue("x", "1")], har.Log.Entries[0].Request.QueryString);
        Assert.Equal(0, har.Log.Entries[1].Response.Status);
        Assert.Equal("backend-unreachable: refused", har.Log.Entries[1].Comment);
    }
}
