using System.Net;
using System.Text;
using Microsoft.Playwright;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Observability;

/// <summary>The client's request inspector in a real browser (headless Chromium): the live list, the detail view, and replays from its buttons.</summary>
public sealed class InspectorBrowserTests
{
    private const string AdminToken = "an-inspector-token-for-tests";

    [Fact]
    public async Task The_inspector_page_lists_requests_live_shows_one_and_replays_it_as_is_and_edited()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using RecordingBackend backend = await RecordingBackend.StartAsync();
        string session = "inspector-" + Guid.NewGuid().ToString("N")[..8];
        TunnelClientHandle client = await stack.StartInspectedClientAsync(session, backend.Url,
            extraArgs: ["--admin-token", AdminToken]);
        Uri inspector = client.InspectorUrl;

        (IPlaywright playwright, IBrowser browser) = await Chromium.LaunchAsync();
        using (playwright)
        await using (browser)
        {
            IPage page = await browser.NewPageAsync();
            await page.GotoAsync(new Uri(inspector, $"/?access_token={AdminToken}").ToString());
            await Assertions.Expect(page.Locator("#status")).ToHaveTextAsync("live", new() { Timeout = 15_000 });
            await Assertions.Expect(page.Locator("tr.request")).ToHaveCountAsync(0);

            // A request through the tunnel appears without a reload.
            using var http = CallerHttp.Create();
            using HttpResponseMessage sent = await http.PostAsync(stack.SessionUrl(session, "/orders?via=browser"),
                new StringContent("""{"item":"tea","count":2}""", Encoding.UTF8, "application/json"));
            Assert.Equal(HttpStatusCode.OK, sent.StatusCode);
            ILocator rows = page.Locator("tr.request");
            await Assertions.Expect(rows).ToHaveCountAsync(1, new() { Timeout = 15_000 });
            await Assertions.Expect(rows.First).ToContainTextAsync("/orders?via=browser");

            // Its detail: the JSON body pretty-printed, the backend's answer below it.
            await rows.First.ClickAsync();
            await Assertions.Expect(page.Locator("#detail")).ToBeVisibleAsync();
            await Assertions.Expect(page.Locator("#request-body pre")).ToHaveTextAsync("{\n  \"item\": \"tea\",\n  \"count\": 2\n}");
            await Assertions.Expect(page.Locator("#response-body pre")).ToContainTextAsync("\"target\": \"/orders?via=browser\"");

            // Replay as is: the backend receives the request a second time, and the replay is listed.
            await page.Locator("#replay").ClickAsync();
            await Eventually.WaitUntilAsync(() => backend.Received.Count == 2, "the backend received the replay");
            Assert.Equal(("POST", "/orders?via=browser", """{"item":"tea","count":2}"""),
                (backend.Received.Last().Method, backend.Received.Last().Target, backend.Received.Last().Body));
            await Assertions.Expect(rows).ToHaveCountAsync(2, new() { Timeout = 15_000 });
            await Assertions.Expect(rows.First).ToContainTextAsync("↻");

            // Edit and replay: another target and body.
            await rows.Last.ClickAsync();
            await page.Locator("#edit-replay").ClickAsync();
            await page.Locator("#edit-target").FillAsync("/orders/edited");
            await page.Locator("#edit-body").FillAsync("""{"item":"coffee"}""");
            await page.Locator("#send-replay").ClickAsync();
            await Eventually.WaitUntilAsync(() => backend.Received.Count == 3, "the backend received the edited replay");
            Assert.Equal(("POST", "/orders/edited", """{"item":"coffee"}"""),
                (backend.Received.Last().Method, backend.Received.Last().Target, backend.Received.Last().Body));
            await Assertions.Expect(rows).ToHaveCountAsync(3, new() { Timeout = 15_000 });
            await Assertions.Expect(rows.First).ToContainTextAsync("/orders/edited");
        }
    }
}
