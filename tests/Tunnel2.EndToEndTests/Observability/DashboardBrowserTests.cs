using System.Net;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Playwright;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.EndToEndTests.Observability;

/// <summary>The admin dashboard in a real browser (headless Chromium): live updates after traffic, and a client drained from the page.</summary>
public sealed class DashboardBrowserTests
{
    private const string AdminToken = "a-dashboard-token-for-tests";

    [Fact]
    public async Task The_dashboard_shows_a_sessions_traffic_live_and_drains_a_client_from_its_button()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--admin-url", "http://127.0.0.1:0", "--admin-token", AdminToken);
        Uri admin = stack.Server.Services.GetRequiredService<ServerEndpoints>().AdminUrl!;
        string session = "browser-" + Guid.NewGuid().ToString("N")[..8];
        await stack.StartClientAsync(session);

        (IPlaywright playwright, IBrowser browser) = await Chromium.LaunchAsync();
        using (playwright)
        await using (browser)
        {
            IPage page = await browser.NewPageAsync();
            await page.GotoAsync(new Uri(admin, $"/?access_token={AdminToken}").ToString());
            ILocator row = page.Locator($"tr.session[data-session=\"{session}\"]");
            await Assertions.Expect(row).ToBeVisibleAsync(new() { Timeout = 15_000 });
            await Assertions.Expect(page.Locator("#status")).ToContainTextAsync("live");
            await Assertions.Expect(row.Locator("td").Nth(3)).ToHaveTextAsync("0.00");

            using var http = CallerHttp.Create();
            for (int i = 0; i < 30; i++)
            {
                Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"))).StatusCode);
            }

            // 30 requests in the last minute: 0.50 per second, pushed by the next event without a reload.
            await Assertions.Expect(row.Locator("td").Nth(3)).ToHaveTextAsync("0.50", new() { Timeout = 15_000 });
            Assert.NotEqual("–", await row.Locator("td").Nth(5).TextContentAsync()); // a p99 is shown

            await row.ClickAsync();
            ILocator client = page.Locator("#clients tbody tr");
            await Assertions.Expect(client).ToHaveCountAsync(1, new() { Timeout = 15_000 });
            string before = (await client.GetAttributeAsync("data-client"))!;
            await client.GetByRole(AriaRole.Button, new() { Name = "Drain" }).ClickAsync();

            // The drained client logs in again on a new uplink: the page's client list shows a new id.
            await Assertions.Expect(page.Locator($"#clients tbody tr[data-client]:not([data-client=\"{before}\"])"))
                .ToHaveCountAsync(1, new() { Timeout = 20_000 });
            using var api = CallerHttp.Create();
            api.DefaultRequestHeaders.Authorization = new System.Net.Http.Headers.AuthenticationHeaderValue("Bearer", AdminToken);
            using JsonDocument detail = JsonDocument.Parse(await api.GetStringAsync(new Uri(admin, $"/api/sessions/{session}")));
            JsonElement only = Assert.Single(detail.RootElement.GetProperty("clients").EnumerateArray());
            Assert.NotEqual(before, only.GetProperty("id").GetInt64().ToString(System.Globalization.CultureInfo.InvariantCulture));
        }
    }
}
