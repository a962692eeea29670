using System.Net;
using System.Net.Sockets;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Access;

/// <summary>Bad tokens are refused and hostile bytes close only the connection that sent them.</summary>
[Collection(TunnelCollection.Name)]
public sealed class HandshakeSecurityTests(TunnelStackFixture fixture)
{
    private TunnelStack Stack => fixture.Stack;

    [Fact]
    public async Task A_client_with_a_wrong_token_is_refused_and_stops_with_exit_code_3()
    {
        string session = Guid.NewGuid().ToString();
        await using TunnelClientHandle client = Stack.StartClientWithoutWaiting(session, token: "wrong-token-123");
        await client.StartAsync();

        await Eventually.WaitUntilAsync(() => client.Stopping.IsCancellationRequested, "the client gives up on a refused token");
        Assert.Equal(3, client.Status.ExitCode);
        Assert.Equal(0, client.Status.ConnectCount);
        Assert.Empty(Stack.Registry.GetUplinks(session));
    }

    [Theory]
    [InlineData("Authorization: Bearer wrong-token-123\r\n")]
    [InlineData("")]
    [InlineData("Authorization: Basic ZTJlOmUyZQ==\r\n")]
    public async Task An_upgrade_with_a_missing_or_wrong_token_gets_401(string authorization)
    {
        using var connection = await RawTunnelConnection.OpenAsync(Stack.TunnelUrl);

        string answer = await connection.HandshakeAsync(authorization, "any-session");

        Assert.StartsWith("HTTP/1.1 401", answer, StringComparison.Ordinal);
        Assert.Contains("application/problem+json", answer, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task An_address_out_of_failed_logins_gets_429_with_Retry_After_even_with_the_right_token()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--TunnelServer:Limits:MaxFailedLoginsPerMinute=3");
        for (int i = 0; i < 3; i++)
        {
            using var wrong = await RawTunnelConnection.OpenAsync(stack.TunnelUrl);
            Assert.StartsWith("HTTP/1.1 401", await wrong.HandshakeAsync("Authorization: Bearer wrong-token-123\r\n", "guessed"), StringComparison.Ordinal);
        }

        using var right = await RawTunnelConnection.OpenAsync(stack.TunnelUrl);
        string answer = await right.HandshakeAsync($"Authorization: Bearer {TunnelStack.Token}\r\n", "guessed");

        Assert.StartsWith("HTTP/1.1 429", answer, StringComparison.Ordinal);
        Assert.Matches("Retry-After: [1-9][0-9]*\r\n", answer);
        Assert.Contains("urn:tunnel2:problem:too-many-failed-logins", answer, StringComparison.Ordinal);
        Assert.Empty(stack.Registry.GetUplinks("guessed"));
    }

    [Fact]
    public async Task An_address_at_its_uplink_cap_gets_429_and_the_count_goes_down_when_uplinks_close()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--TunnelServer:Limits:MaxUplinksPerAddress=2");
        string session = "capped-" + Guid.NewGuid().ToString("N")[..8];
        TunnelClientHandle first = await stack.StartClientAsync(session, extraArgs: ["--uplinks", "2"]);
        await Eventually.WaitUntilAsync(() => stack.Registry.GetUplinks(session).Count == 2, "both uplinks of the first client are in");

        using (var third = await RawTunnelConnection.OpenAsync(stack.TunnelUrl))
        {
            string answer = await third.HandshakeAsync($"Authorization: Bearer {TunnelStack.Token}\r\n", session);
            Assert.StartsWith("HTTP/1.1 429", answer, StringComparison.Ordinal);
            Assert.Contains("urn:tunnel2:problem:too-many-uplinks", answer, StringComparison.Ordinal);
        }

        await first.StopAsync();
        await Eventually.WaitUntilAsync(() => stack.Registry.GetUplinks(session).Count == 0, "the first client's uplinks are gone");
        await stack.StartClientAsync(session); // the count went down: a new login fits again
        Assert.Single(stack.Registry.GetUplinks(session));
    }

    [Theory]
    [InlineData("1")]
    [InlineData("2")]
    [InlineData("6")]
    public async Task A_peer_offering_only_another_protocol_version_gets_400_naming_the_version_spoken(string offered)
    {
        string session = "old-peer-" + offered;
        using var connection = await RawTunnelConnection.OpenAsync(Stack.TunnelUrl);

        string answer = await connection.HandshakeAsync($"Authorization: Bearer {TunnelStack.Token}\r\n", session, offered);

        Assert.StartsWith("HTTP/1.1 400", answer, StringComparison.Ordinal);
        Assert.Contains("Tunnel2-Version: 5\r\n", answer, StringComparison.OrdinalIgnoreCase);
        Assert.Contains("urn:tunnel2:problem:bad-version", answer, StringComparison.Ordinal);
        Assert.Empty(Stack.Registry.GetUplinks(session));
    }

    [Theory]
    [InlineData("3", "3")]
    [InlineData("4, 3", "4")]
    [InlineData("5, 4, 3", "5")]
    public async Task A_version_3_peer_still_logs_in_and_a_version_4_peer_gets_4(string offered, string chosen)
    {
        string session = "peer-v" + chosen;
        using var connection = await RawTunnelConnection.OpenAsync(Stack.TunnelUrl);

        string answer = await connection.HandshakeAsync($"Authorization: Bearer {TunnelStack.Token}\r\n", session, offered);

        Assert.StartsWith("HTTP/1.1 101", answer, StringComparison.Ordinal);
        Assert.Contains($"Tunnel2-Version: {chosen}\r\n", answer, StringComparison.OrdinalIgnoreCase);
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Count == 1, "the uplink is registered");
        Assert.Equal(int.Parse(chosen, System.Globalization.CultureInfo.InvariantCulture), Stack.Registry.GetUplinks(session)[0].Settings.ProtocolVersion);
    }

    [Fact]
    public async Task Random_bytes_on_the_tunnel_port_close_that_connection_and_others_keep_working()
    {
        using var connection = await RawTunnelConnection.OpenAsync(Stack.TunnelUrl);
        byte[] garbage = new byte[4096];
        new Random(42).NextBytes(garbage);

        await connection.Stream.WriteAsync(garbage);

        Assert.True(await connection.ReadsToEndAsync(), "the server should close a connection that sends garbage");
        Assert.Equal(HttpStatusCode.OK, (await fixture.Http.GetAsync(fixture.Url("/loadtest/ping"))).StatusCode);
    }

    [Theory]
    [InlineData("random")]
    [InlineData("oversized")]
    [InlineData("unknown-type")]
    [InlineData("unopened-stream")]
    [InlineData("truncated")]
    public async Task Malformed_frames_after_the_handshake_close_that_uplink_only(string kind)
    {
        string session = "hostile-" + kind;
        using var connection = await RawTunnelConnection.OpenAsync(Stack.TunnelUrl);
        string answer = await connection.HandshakeAsync($"Authorization: Bearer {TunnelStack.Token}\r\n", session);
        Assert.StartsWith("HTTP/1.1 101", answer, StringComparison.Ordinal);
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Count == 1, "the raw uplink is registered");

        await connection.Stream.WriteAsync(MalformedFrame(kind));
        if (kind == "truncated")
        {
            connection.Socket.Shutdown(SocketShutdown.Send);
        }

        Assert.True(await connection.ReadsToEndAsync(), $"the server should close an uplink that sent a {kind} frame");
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Count == 0, "the hostile uplink is dropped");
        await Eventually.WaitUntilAsync(
            () => CapturedLogs.MessagesWhere("Uplink", session + "@").Exists(message => message.Contains("broke the protocol", StringComparison.Ordinal)),
            "the server logs the protocol error with the uplink's session");

        Assert.Equal(HttpStatusCode.OK, (await fixture.Http.GetAsync(fixture.Url("/loadtest/ping"))).StatusCode);
    }

    private static byte[] MalformedFrame(string kind)
    {
        byte[] frame;
        switch (kind)
        {
            case "oversized":
                frame = [0x7F, 0xFF, 0xFF, 0xFF, 3, 0, 0, 0, 0, 1];
                break;
            case "unknown-type":
                frame = [0, 0, 0, 0, 0xEE, 0, 0, 0, 0, 1];
                break;
            case "unopened-stream":
                frame = [0, 0, 0, 4, 3, 0, 0, 0, 0x10, 0, 1, 2, 3, 4];
                break;
            case "truncated":
                frame = [0, 0, 0, 100, 3, 0, 0, 0];
                break;
            default:
                frame = new byte[8192];
                new Random(7).NextBytes(frame);
                frame[0] = 0x40; // a length far above the frame limit, so the outcome does not depend on the seed
                break;
        }

        return frame;
    }
}
