using System.IO.Pipelines;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

public sealed class UplinkRoleTests
{
    private static DuplexPipe Transport() => new(new Pipe().Reader, new Pipe().Writer);

    [Fact]
    public void A_client_uplink_needs_a_stream_handler()
    {
        Assert.Throws<ArgumentException>(() => new Uplink(Transport(), new UplinkSettings(), UplinkRole.Client, NullLogger.Instance));
    }

    [Fact]
    public void Only_the_server_opens_streams()
    {
        var client = new Uplink(Transport(), new UplinkSettings(), UplinkRole.Client, NullLogger.Instance, new RecordingStreamHandler());

        Assert.Throws<InvalidOperationException>(() => client.TryOpenStream(new RequestHead("GET", "/", []), endStream: true, out _));
    }

    [Fact]
    public async Task Only_the_server_reads_a_response_head()
    {
        await using var pair = UplinkPair.Start();
        (_, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/", []), endStream: true);

        Assert.Throws<InvalidOperationException>(() => { _ = client.ReadResponseHeadAsync(); });
        Assert.Null(pair.Server.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true).RequestHead);
    }

    [Fact]
    public void A_new_uplink_is_open_and_named()
    {
        var server = new Uplink(Transport(), new UplinkSettings(), UplinkRole.Server, NullLogger.Instance, name: "session-a 10.0.0.1");
        var unnamed = new Uplink(Transport(), new UplinkSettings(), UplinkRole.Server, NullLogger.Instance);

        Assert.True(server.IsOpen);
        Assert.True(server.AcceptsNewStreams);
        Assert.Null(server.CloseReason);
        Assert.False(server.Closed.IsCancellationRequested);
        Assert.Equal(0, server.ActiveStreamCount);
        Assert.Equal("session-a 10.0.0.1", server.Name);
        Assert.Equal("Server", unnamed.Name);
    }

    [Fact]
    public void Settings_default_to_the_documented_handshake_values()
    {
        var settings = new UplinkSettings();

        Assert.Equal(262_144, settings.MaxFramePayload);
        Assert.Equal(16_384, settings.InitialStreamWindow);
        Assert.Equal(16 * 1024 * 1024, settings.ConnectionWindow);
        Assert.Equal(1024 * 1024, settings.MaxStreamWindow);
        Assert.Equal(10_000, settings.MaxConcurrentStreams);
        Assert.Equal(TimeSpan.FromSeconds(15), settings.KeepAliveInterval);
        Assert.Equal(TimeSpan.FromSeconds(45), settings.KeepAliveTimeout);
        Assert.Equal(256 * 1024, settings.DataChunkSize);
        Assert.Equal(16 * 1024, (settings with { MaxFramePayload = 16 * 1024 }).DataChunkSize);
    }
}
