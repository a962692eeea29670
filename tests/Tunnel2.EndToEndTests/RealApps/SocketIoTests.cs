using System.Text.Json.Nodes;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.RealApps;

/// <summary>
/// python-socketio 5.7 (Debian's python3-socketio on aiohttp) through the tunnel: twenty clients connect over HTTP
/// long-polling, upgrade to WebSocket, join four rooms of five and say something to their room; each gets exactly its
/// room's five messages. In host mode (<c>sio.apps.test</c>) and in path mode, where the page's socket.io path is
/// <c>/session/sio/socket.io/</c> and the server, behind the client's default prefix stripping, serves its default
/// <c>/socket.io/</c>. Engine.IO refuses an Origin that is not its Host, so the caller's Host must reach it.
/// </summary>
public sealed class SocketIoTests
{
    private const string Session = "sio";
    private const string Suffix = "apps.test";
    private const int Clients = 20;
    private const int Rooms = 4;

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Twenty_clients_upgrade_from_polling_to_WebSocket_and_each_gets_exactly_its_rooms_messages(bool byHost)
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--host-suffix", Suffix);
        await using PythonApp server = await SocketIoServer.StartAsync();
        await stack.StartClientAsync(Session, server.Url);
        var endpoint = new Uri(byHost
            ? $"http://{Session}.{Suffix}:{stack.PublicUrl.Port}/socket.io/"
            : $"http://127.0.0.1:{stack.PublicUrl.Port}/session/{Session}/socket.io/");
        var browser = new PublicBrowser(stack.PublicUrl.Port);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));

        SocketIoClient[] clients = await ConnectAllAsync(browser, endpoint, server, timeout.Token);
        try
        {
            await Task.WhenAll(clients.Select(async (client, i) =>
            {
                Assert.Equal("polling", client.TransportBeforeUpgrade);
                Assert.Equal(Room(i), (await client.CallAsync("join", Room(i)))[0]!.GetValue<string>());
                Assert.Equal("websocket", (await client.CallAsync("transport"))[0]!.GetValue<string>());
            }));

            // Each says something to its room once every client is in its room; the server queues the message to the room
            // before it acknowledges, so after every acknowledgement, one more call on each client comes after all of them.
            await Task.WhenAll(clients.Select(async (client, i) =>
                Assert.Equal("sent", (await client.CallAsync("say", new JsonObject { ["room"] = Room(i), ["from"] = i }))[0]!.GetValue<string>())));
            await Task.WhenAll(clients.Select(client => client.CallAsync("transport")));

            for (int i = 0; i < Clients; i++)
            {
                int[] expected = Enumerable.Range(0, Clients).Where(other => other % Rooms == i % Rooms).ToArray();
                int[] received = clients[i].Received("said").Select(message => message!["from"]!.GetValue<int>()).Order().ToArray();
                Assert.True(expected.SequenceEqual(received), $"Client {i} in {Room(i)} got messages from [{string.Join(", ", received)}], not [{string.Join(", ", expected)}].\n{server.Output}");
                Assert.All(clients[i].Received("said"), message => Assert.Equal(Room(i), message!["room"]!.GetValue<string>()));
            }
        }
        finally
        {
            foreach (SocketIoClient client in clients)
            {
                await client.DisposeAsync();
            }
        }
    }

    private static string Room(int client) => $"room-{client % Rooms}";

    private static async Task<SocketIoClient[]> ConnectAllAsync(PublicBrowser browser, Uri endpoint, PythonApp server, CancellationToken cancellationToken)
    {
        Task<SocketIoClient>[] connecting = Enumerable.Range(0, Clients).Select(_ => SocketIoClient.ConnectAsync(browser, endpoint, cancellationToken)).ToArray();
        try
        {
            return await Task.WhenAll(connecting);
        }
        catch (Exception ex)
        {
            foreach (Task<SocketIoClient> connected in connecting.Where(task => task.IsCompletedSuccessfully))
            {
                await connected.Result.DisposeAsync();
            }

            throw new InvalidOperationException($"Not every socket.io client connected: {ex.Message}\nThe server's log:\n{server.Output}", ex);
        }
    }
}
