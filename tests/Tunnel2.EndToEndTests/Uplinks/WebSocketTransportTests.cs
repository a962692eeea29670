using System.Net;
using System.Net.Http.Headers;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Uplinks;

/// <summary>The same frames carried in WebSocket binary messages (TunnelClient:Uplink:Transport=websocket) serve requests alike.</summary>
[Collection(TunnelCollection.Name)]
public sealed class WebSocketTransportTests(TunnelStackFixture fixture)
{
    private static readonly string[] WebSocket = ["--TunnelClient:Uplink:Transport=websocket"];

    private TunnelStack Stack => fixture.Stack;

    [Fact]
    public async Task A_client_on_the_websocket_transport_relays_requests_and_bodies_byte_exact()
    {
        string session = "websocket-" + Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = await Stack.StartClientAsync(session, extraArgs: WebSocket);
        Assert.EndsWith("(websocket)", Stack.Registry.GetUplinks(session).Single().Name, StringComparison.Ordinal);

        using HttpResponseMessage ping = await fixture.Http.GetAsync(Stack.SessionUrl(session, "/loadtest/ping"));
        Assert.Equal(HttpStatusCode.OK, ping.StatusCode);
        Assert.Equal("pong", await ping.Content.ReadAsStringAsync());

        const long length = 8L * 1024 * 1024 + 5; // several flow-control windows and many WebSocket messages
        using var content = new PatternContent(length, seed: 21);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
        using HttpResponseMessage echo = await fixture.Http.PostAsync(Stack.SessionUrl(session, "/loadtest/echo"), content);
        Assert.Equal(HttpStatusCode.OK, echo.StatusCode);
        byte[] body = await echo.Content.ReadAsByteArrayAsync();
        Assert.Equal(length, body.LongLength);
        for (long i = 0; i < length; i++)
        {
            if (body[i] != PatternContent.At(i, 21))
            {
                Assert.Fail($"byte {i} differs");
            }
        }

        Assert.Equal(2, client.Status.RequestsRelayed);
    }

    [Fact]
    public async Task A_wrong_token_on_the_websocket_transport_stops_the_client_with_exit_code_3()
    {
        string session = "websocket-" + Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = Stack.StartClientWithoutWaiting(session, token: "wrong-token-123", extraArgs: WebSocket);
        await client.StartAsync();

        await Eventually.WaitUntilAsync(() => client.Stopping.IsCancellationRequested, "the client gives up on a refused token");
        Assert.Equal(3, client.Status.ExitCode);
        Assert.Equal(0, client.Status.ConnectCount);
        Assert.Empty(Stack.Registry.GetUplinks(session));
    }
}
