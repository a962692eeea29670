using System.Net;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelClient.Backends;

namespace Tunnel2.EndToEndTests.Crowds;

/// <summary>
/// Past <see cref="Backend.CrowdedAbove"/> exchanges in flight, the client's backend reads wait for the backend's bytes
/// before they take a buffer: with a crowd waiting for its heads, every caller still gets its own answer, and a probe
/// beside them is answered.
/// </summary>
[Collection(TunnelCollection.Name)]
public sealed class CrowdedBackendTests(TunnelStackFixture fixture)
{
    private const int Callers = Backend.CrowdedAbove + 144;

    private TunnelStack Stack => fixture.Stack;

    [Fact]
    public async Task A_crowd_waiting_for_its_heads_each_gets_its_own_answer_and_a_probe_beside_it_is_answered()
    {
        string session = Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = await Stack.StartClientAsync(session, maxConcurrency: 1000);
        Backend backend = Assert.Single(client.Host.Services.GetRequiredService<BackendSet>().All);

        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(60) };
        var answers = new Task<string>[Callers];
        for (int i = 0; i < Callers; i++)
        {
            answers[i] = http.GetStringAsync(Stack.SessionUrl(session, $"/loadtest/delay/{2000 + i}"));
        }

        await Eventually.WaitUntilAsync(() => backend.IsCrowded, "the crowd makes the backend crowded");
        using (HttpResponseMessage probe = await http.GetAsync(Stack.SessionUrl(session, "/loadtest/ping")))
        {
            Assert.Equal(HttpStatusCode.OK, probe.StatusCode);
            Assert.Equal("pong", await probe.Content.ReadAsStringAsync());
        }

        string[] bodies = await Task.WhenAll(answers);
        for (int i = 0; i < Callers; i++)
        {
            Assert.Equal($"{{\"delayMs\":{2000 + i}}}", bodies[i]);
        }

        await Eventually.WaitUntilAsync(() => !backend.IsCrowded, "the backend calms once the crowd is answered");
    }
}
