using System.Net;
using System.Net.Http.Headers;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>Large bodies stream through in both directions, byte-exact, without the tunnel holding them.</summary>
[Collection(TunnelCollection.Name)]
public sealed class StreamingTests(TunnelStackFixture fixture)
{
    private const long MaxGrowth = 64L * 1024 * 1024;

    [Fact]
    public async Task Upload_of_256_MiB_through_echo_comes_back_byte_exact_in_bounded_memory()
    {
        const long length = 256L * 1024 * 1024;
        await using MemorySampler memory = MemorySampler.Start();
        using var content = new PatternContent(length, seed: 3);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(3));

        // Full duplex: the echo streams back while the upload is still going, as it would for curl.
        (DuplexHttp1Client.ResponseHead head, long received) = await DuplexHttp1Client.PostAsync(
            fixture.Stack.PublicUrl, $"/session/{TunnelStackFixture.Session}/loadtest/echo", content,
            async (head, body) => (head, await VerifyAsync(body, offset => PatternContent.At(offset, 3), length)),
            timeout.Token);

        Assert.Equal(200, head.Status);
        Assert.Equal("application/octet-stream", head.Headers["Content-Type"]);
        Assert.Equal(length, received);
        Assert.True(memory.PeakGrowthBytes < MaxGrowth, $"memory grew by {memory.PeakGrowthBytes / 1024 / 1024} MiB");
    }

    [Fact]
    public async Task Chunked_upload_without_content_length_arrives_whole()
    {
        const long length = 3L * 1024 * 1024 + 17;
        using var content = new PatternContent(length, seed: 9, chunked: true);
        using var request = new HttpRequestMessage(HttpMethod.Post, fixture.Url("/loadtest/echo")) { Content = content };

        using HttpResponseMessage response = await fixture.Http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(length, await VerifyAsync(await response.Content.ReadAsStreamAsync(), offset => PatternContent.At(offset, 9)));
    }

    [Fact]
    public async Task Download_of_1_GiB_arrives_byte_exact_in_bounded_memory()
    {
        const long length = 1024L * 1024 * 1024;
        await using MemorySampler memory = MemorySampler.Start();

        using HttpResponseMessage response = await fixture.Http.GetAsync(fixture.Url($"/loadtest/bytes/{length}"), HttpCompletionOption.ResponseHeadersRead);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(length, response.Content.Headers.ContentLength);
        long received = await VerifyAsync(await response.Content.ReadAsStreamAsync(), offset => (byte)(offset % 251));
        Assert.Equal(length, received);
        Assert.True(memory.PeakGrowthBytes < MaxGrowth, $"memory grew by {memory.PeakGrowthBytes / 1024 / 1024} MiB");
    }

    private static async Task<long> VerifyAsync(Stream body, Func<long, byte> expected, long limit = long.MaxValue)
    {
        byte[] buffer = new byte[256 * 1024];
        long offset = 0;
        int read;
        while (offset < limit && (read = await body.ReadAsync(buffer.AsMemory(0, (int)Math.Min(buffer.Length, limit - offset)))) > 0)
        {
            for (int i = 0; i < read; i++)
            {
                if (buffer[i] != expected(offset + i))
                {
                    Assert.Fail($"byte {offset + i} is {buffer[i]}, expected {expected(offset + i)}");
                }
            }

            offset += read;
        }

        return offset;
    }
}
