using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>Protocol version 4's Health frame: a client tells the server whether its backend is ready.</summary>
public sealed class HealthFrameTests
{
    [Fact]
    public async Task The_client_reports_unready_then_ready_and_the_server_follows()
    {
        await using var pair = UplinkPair.Start();
        Assert.True(pair.Server.PeerReady);

        Assert.True(pair.Client.TrySendHealth(ready: false));
        await Eventually.WaitUntilAsync(() => !pair.Server.PeerReady, "the server hears unready");
        Assert.True(pair.Client.TrySendHealth(ready: true));
        await Eventually.WaitUntilAsync(() => pair.Server.PeerReady, "the server hears ready");
        Assert.True(pair.Server.IsOpen);
    }

    [Fact]
    public async Task A_version_3_uplink_sends_no_health_and_refuses_one_as_a_protocol_error()
    {
        var v3 = new UplinkSettings { ProtocolVersion = 3 };
        await using var pair = UplinkPair.Start(v3);
        Assert.False(pair.Client.TrySendHealth(ready: false));

        await using var server = RawPeer.ForServer(v3);
        await server.SendFrameAsync(FrameType.Health, 0, FrameBytes.U32(0));
        ReceivedFrame? goAway = (await server.ReadUntilAsync(frame => frame.Header.Type == FrameType.GoAway)).Match;
        Assert.NotNull(goAway);
        await server.Run;
        Assert.Contains("Health", server.Uplink.CloseReason, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(1u, 0u)]
    [InlineData(0u, 2u)]
    public async Task A_health_frame_off_stream_0_or_with_an_unknown_state_is_a_protocol_error(uint streamId, uint state)
    {
        await using var server = RawPeer.ForServer();
        await server.SendFrameAsync(FrameType.Health, streamId, FrameBytes.U32(state));
        await server.Run;

        Assert.False(server.Uplink.IsOpen);
        Assert.StartsWith("protocol error", server.Uplink.CloseReason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_client_refuses_a_health_frame_from_the_server()
    {
        await using var client = RawPeer.ForClient();
        await client.SendFrameAsync(FrameType.Health, 0, FrameBytes.U32(1));
        await client.Run;

        Assert.StartsWith("protocol error", client.Uplink.CloseReason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_server_side_uplink_sends_no_health()
    {
        await using var server = RawPeer.ForServer();

        Assert.False(server.Uplink.TrySendHealth(ready: true));
    }
}
