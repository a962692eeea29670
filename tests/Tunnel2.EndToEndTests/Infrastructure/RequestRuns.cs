using System.Net;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>Runs of requests the balancing and health tests send, and what they check on the way.</summary>
public static class RequestRuns
{
    /// <summary><paramref name="callers"/> callers at once, each sending <paramref name="requestsEach"/> GETs in a row; every answer must be 200.</summary>
    public static async Task GetConcurrentlyAsync(HttpClient http, Uri url, int callers, int requestsEach)
    {
        var running = new Task[callers];
        for (int i = 0; i < callers; i++)
        {
            running[i] = Task.Run(async () =>
            {
                for (int r = 0; r < requestsEach; r++)
                {
                    using HttpResponseMessage response = await http.GetAsync(url);
                    Assert.Equal(HttpStatusCode.OK, response.StatusCode);
                }
            });
        }

        await Task.WhenAll(running);
    }

    /// <summary>
    /// Sends one request per method in order (a POST with a small body) and returns the method and status of those that
    /// reached <paramref name="dying"/>; every other one must be answered 200.
    /// </summary>
    public static async Task<List<(string Method, HttpStatusCode Status)>> SendNotingWhichReachedAsync(HttpClient http, Uri url, HttpMethod[] methods, HangUpBackend dying)
    {
        var reachedDying = new List<(string Method, HttpStatusCode Status)>();
        foreach (HttpMethod method in methods)
        {
            int before = dying.Requests;
            using var request = new HttpRequestMessage(method, url);
            if (method == HttpMethod.Post)
            {
                request.Content = new StringContent("once");
            }

            using HttpResponseMessage response = await http.SendAsync(request);
            if (dying.Requests > before)
            {
                reachedDying.Add((method.Method, response.StatusCode));
            }
            else
            {
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            }
        }

        return reachedDying;
    }
}
