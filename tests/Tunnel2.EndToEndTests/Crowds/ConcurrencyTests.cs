using System.Net;
using System.Text.Json;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Crowds;

[Collection(TunnelCollection.Name)]
public sealed class ConcurrencyTests(TunnelStackFixture fixture)
{
    [Fact]
    public async Task A_thousand_concurrent_requests_over_one_uplink_each_get_their_own_answer()
    {
        Assert.Single(fixture.Stack.Registry.GetUplinks(TunnelStackFixture.Session));
        const int count = 1000;
        using var start = new SemaphoreSlim(0);
        Task<(int Id, string? Echoed, string Body)>[] requests = Enumerable.Range(0, count).Select(async id =>
        {
            await start.WaitAsync();
            if (id % 2 == 0)
            {
                using HttpResponseMessage response = await fixture.Http.GetAsync(fixture.Url($"/loadtest/get?id={id}"));
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
                JsonElement json = JsonDocument.Parse(await response.Content.ReadAsStringAsync()).RootElement;
                return (id, json.GetProperty("args").GetProperty("id").GetString(), string.Empty);
            }

            using var content = new StringContent($"request-{id}-" + new string('x', id));
            using HttpResponseMessage echo = await fixture.Http.PostAsync(fixture.Url("/loadtest/echo"), content);
            Assert.Equal(HttpStatusCode.OK, echo.StatusCode);
            return (id, (string?)null, await echo.Content.ReadAsStringAsync());
        }).ToArray();

        start.Release(count);
        (int Id, string? Echoed, string Body)[] answers = await Task.WhenAll(requests);

        foreach ((int id, string? echoed, string body) in answers)
        {
            if (id % 2 == 0)
            {
                Assert.Equal(id.ToString(System.Globalization.CultureInfo.InvariantCulture), echoed);
            }
            else
            {
                Assert.Equal($"request-{id}-" + new string('x', id), body);
            }
        }
    }
}
