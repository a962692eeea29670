using System.Net;
using Tunnel2.TestBackend.Endpoints;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.TestBackend.Tests;

public sealed class BytesEndpointTests(BackendFixture fixture)
{
    private const long SixteenGiB = 16L * 1024 * 1024 * 1024;

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(250)]
    [InlineData(251)]
    [InlineData(252)]
    [InlineData(64_256)]
    [InlineData(64_257)]
    [InlineData(1_000_003)]
    [InlineData(8 * 1024 * 1024 + 5)]
    public async Task Bytes_streams_n_bytes_of_the_i_mod_251_pattern(long count)
    {
        using var response = await fixture.Client.GetAsync($"loadtest/bytes/{count}", HttpCompletionOption.ResponseHeadersRead, Token);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("application/octet-stream", response.Content.Headers.ContentType?.MediaType);
        Assert.Equal(count, response.Content.Headers.ContentLength);
        await using var body = await response.Content.ReadAsStreamAsync(Token);
        Assert.Equal(count, await StreamVerifier.VerifyAsync(body, StreamVerifier.BytePattern, progress: null, Token));
    }

    [Fact]
    public void The_pattern_is_offset_mod_251()
    {
        Assert.Equal(0, BytePattern.At(0));
        Assert.Equal(250, BytePattern.At(250));
        Assert.Equal(0, BytePattern.At(251));
        Assert.Equal((byte)(SixteenGiB % 251), BytePattern.At(SixteenGiB));
    }

    [Fact]
    public async Task Bytes_accepts_16_GiB_and_starts_streaming()
    {
        using var response = await fixture.Client.GetAsync($"loadtest/bytes/{SixteenGiB}", HttpCompletionOption.ResponseHeadersRead, Token);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(SixteenGiB, response.Content.Headers.ContentLength);

        // Read the first megabyte, then walk away: disposing the response aborts the download.
        await using var body = await response.Content.ReadAsStreamAsync(Token);
        var first = new byte[1024 * 1024];
        await body.ReadExactlyAsync(first, Token);
        for (var i = 0; i < first.Length; i++)
        {
            Assert.Equal(BytePattern.At(i), first[i]);
        }
    }

    [Theory]
    [InlineData("-1")]
    [InlineData("abc")]
    [InlineData("17179869185")]
    [InlineData("99999999999999999999")]
    [InlineData("1e3")]
    public async Task Bytes_rejects_a_bad_count_with_problem_json(string count)
    {
        using var response = await fixture.Client.GetAsync($"loadtest/bytes/{count}", Token);

        await ProblemAssert.IsProblemAsync(response, HttpStatusCode.BadRequest, count, Token);
    }
}
