using System.Net;
using System.Net.Http.Headers;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.TestBackend.Tests;

public sealed class EchoEndpointTests(BackendFixture fixture)
{
    private const long MiB = 1024 * 1024;

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Echo_streams_64_MiB_back_byte_for_byte_before_the_upload_ends()
    {
        const long length = 64 * MiB;
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(Token);
        timeout.CancelAfter(TimeSpan.FromSeconds(40));

        // The upload stops at 32 MiB until 16 MiB have come back: a server that held the whole body
        // before answering would never release it.
        var halfWayBack = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var content = new GeneratedContent(length, announceLength: true, pauseAt: 32 * MiB, resumeWhen: halfWayBack.Task);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/x-tunnel2-test");

        var (head, received) = await DuplexHttp1Client.PostAsync(fixture.Backend.BaseAddress, "/loadtest/echo", content,
            async (head, body) =>
            {
                var received = await StreamVerifier.VerifyAsync(body, DeterministicBytes.Fill,
                    progress: bytes =>
                    {
                        if (bytes >= 16 * MiB)
                        {
                            halfWayBack.TrySetResult();
                        }
                    },
                    timeout.Token);
                return (head, received);
            },
            timeout.Token);

        Assert.Equal(200, head.Status);
        Assert.Equal("67108864", head.Headers["Content-Length"]);
        Assert.Equal("application/x-tunnel2-test", head.Headers["Content-Type"]);
        Assert.Equal(length, received);
        Assert.True(halfWayBack.Task.IsCompleted);
    }

    [Fact]
    public async Task Echo_of_a_chunked_upload_is_chunked_and_identical()
    {
        // Small enough for HttpClient, which reads the response only after the whole upload (see DuplexHttp1Client).
        const long length = 256 * 1024 + 12_345;
        using var content = new GeneratedContent(length, announceLength: false);
        using var request = new HttpRequestMessage(HttpMethod.Post, "loadtest/echo") { Content = content };

        using var response = await fixture.Client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, Token);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.True(request.Headers.TransferEncodingChunked);
        Assert.True(response.Headers.TransferEncodingChunked);
        Assert.Null(response.Content.Headers.ContentLength);
        await using var body = await response.Content.ReadAsStreamAsync(Token);
        Assert.Equal(length, await StreamVerifier.VerifyAsync(body, DeterministicBytes.Fill, progress: null, Token));
    }

    [Fact]
    public async Task Echo_keeps_the_content_type_of_a_small_body()
    {
        using var content = new StringContent("{\"hello\":\"tunnel\"}", System.Text.Encoding.UTF8, "application/json");

        using var response = await fixture.Client.PostAsync("loadtest/echo", content, Token);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("application/json; charset=utf-8", response.Content.Headers.ContentType?.ToString());
        Assert.Equal("{\"hello\":\"tunnel\"}", await response.Content.ReadAsStringAsync(Token));
    }

    [Fact]
    public async Task Echo_of_an_empty_body_is_empty()
    {
        using var content = new ByteArrayContent([]);

        using var response = await fixture.Client.PostAsync("loadtest/echo", content, Token);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(0, response.Content.Headers.ContentLength);
        Assert.Empty(await response.Content.ReadAsByteArrayAsync(Token));
    }
}
