using System.Net;
using System.Security.Cryptography;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>Concurrent uploads of growing sizes (8 KiB to ~1 MiB) to an echo endpoint, each checked to come back byte for byte.</summary>
public static class EchoUploads
{
    /// <param name="echoUrl">An endpoint that streams the body back (TestBackend's <c>/loadtest/echo</c> through a session).</param>
    public static async Task RunAsync(Uri echoUrl, int count = 40)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(60) };
        var exchanges = new Task[count];
        for (int i = 0; i < exchanges.Length; i++)
        {
            byte[] body = RandomNumberGenerator.GetBytes(8 * 1024 + (i * 25_000));
            exchanges[i] = EchoAsync(http, echoUrl, body);
        }

        await Task.WhenAll(exchanges);
    }

    private static async Task EchoAsync(HttpClient http, Uri url, byte[] body)
    {
        using var content = new ByteArrayContent(body);
        using HttpResponseMessage response = await http.PostAsync(url, content);
        Assert.True(response.StatusCode == HttpStatusCode.OK,
            $"{body.Length} bytes: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}; the in-process "
            + $"server's and clients' last stream lines: {string.Join(" | ", CapturedLogs.Everything().Where(line => line.Contains("tream ", StringComparison.Ordinal)).TakeLast(12))}");
        byte[] echoed = await response.Content.ReadAsByteArrayAsync();
        Assert.True(body.AsSpan().SequenceEqual(echoed), "the echoed body differs from the one sent");
    }
}
