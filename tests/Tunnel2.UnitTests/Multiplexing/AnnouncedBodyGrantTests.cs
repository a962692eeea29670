using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// A request that announces its body's length (<c>Content-Length</c>) is granted credit for it as the client accepts the
/// stream, up to the stream's share of the receive budget, so a body over the initial window does not wait for its
/// reader before it can flow on.
/// </summary>
public sealed class AnnouncedBodyGrantTests
{
    private const int InitialWindow = UplinkSettings.DefaultInitialStreamWindow;

    [Fact]
    public async Task A_body_with_a_length_is_granted_credit_for_all_of_it_before_anything_is_read()
    {
        await using var pair = UplinkPair.Start();
        UplinkStream server = pair.Server.OpenStreamOrFail(Post(100_000), endStream: false);
        Assert.Equal(InitialWindow, await server.AcquireSendCreditAsync(int.MaxValue, CancellationToken.None)); // before any answer can come
        await pair.Handler.NextAsync();

        // Nothing on the client reads the body: the credit beyond the initial window is the grant on acceptance.
        Assert.Equal(100_000 - InitialWindow, await server.AcquireSendCreditAsync(int.MaxValue, CancellationToken.None).AsTask().WithTimeout());
    }

    [Fact]
    public async Task The_grant_stops_at_the_streams_share_of_the_receive_budget()
    {
        var settings = new UplinkSettings { MaxStreamWindow = 256 * 1024 };
        await using var pair = UplinkPair.Start(settings);
        UplinkStream server = pair.Server.OpenStreamOrFail(Post(10_000_000), endStream: false);
        Assert.Equal(InitialWindow, await server.AcquireSendCreditAsync(int.MaxValue, CancellationToken.None)); // before any answer can come
        await pair.Handler.NextAsync();

        Assert.Equal(settings.MaxStreamWindow - InitialWindow, await server.AcquireSendCreditAsync(int.MaxValue, CancellationToken.None).AsTask().WithTimeout());
        await pair.BarrierAsync();
        Assert.False(server.HasSendCredit);
    }

    [Theory]
    [InlineData(null)] // no length: chunked, or until the caller's end
    [InlineData("4096")] // within the initial window
    [InlineData("12x")] // not a length: the backend's parser judges it, the window stays as it was
    public async Task A_body_without_a_length_beyond_the_initial_window_gets_no_grant_before_it_is_read(string? contentLength)
    {
        await using var pair = UplinkPair.Start();
        List<HeaderField> headers = contentLength is null ? [] : [new("Content-Length", contentLength)];
        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/upload", headers), endStream: false);
        Assert.Equal(InitialWindow, await server.AcquireSendCreditAsync(int.MaxValue, CancellationToken.None)); // before any answer can come
        await pair.Handler.NextAsync();

        await pair.BarrierAsync(); // a grant on acceptance would have arrived before the barrier's answer
        Assert.False(server.HasSendCredit);
    }

    private static RequestHead Post(long length) =>
        new("POST", "/upload", [new("Content-Length", length.ToString(System.Globalization.CultureInfo.InvariantCulture))]);
}
