using System.Collections.Concurrent;
using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json.Nodes;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// The smallest socket.io client that does what the JavaScript one does in a browser (Engine.IO 4, Socket.IO 5): the
/// handshake and the namespace's connect over HTTP long-polling, then the upgrade to WebSocket (<c>2probe</c>,
/// <c>3probe</c>, <c>5</c>), then events and acknowledgements over the WebSocket, with the page's <c>Origin</c> on every
/// request. It keeps the events it receives, answers the server's pings, and knows nothing of reconnecting or binary
/// attachments (the tests need neither).
/// </summary>
public sealed class SocketIoClient : IAsyncDisposable
{
    private const char PacketSeparator = '\x1e';

    private readonly ClientWebSocket _socket;
    private readonly SemaphoreSlim _sending = new(1, 1);
    private readonly ConcurrentDictionary<int, TaskCompletionSource<JsonArray>> _acknowledgements = new();
    private readonly List<(string Name, JsonArray Arguments)> _events = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _receiving;
    private int _lastAcknowledgement;

    private SocketIoClient(ClientWebSocket socket, string transportBeforeUpgrade)
    {
        _socket = socket;
        TransportBeforeUpgrade = transportBeforeUpgrade;
        _receiving = ReceiveAsync();
    }

    /// <summary>The transport the server said it had for this client before the upgrade (asked over polling).</summary>
    public string TransportBeforeUpgrade { get; }

    /// <summary>
    /// Connects to <paramref name="endpoint"/> (socket.io's path, e.g. <c>http://host/socket.io/</c>) as a page of
    /// <paramref name="endpoint"/>'s origin: polling first, then upgraded to WebSocket.
    /// </summary>
    public static async Task<SocketIoClient> ConnectAsync(PublicBrowser browser, Uri endpoint, CancellationToken cancellationToken)
    {
        using var polling = new EngineIoPolling(browser, endpoint);
        {
            await polling.HandshakeAsync(cancellationToken);
            await polling.SendAsync("40", cancellationToken);
            await polling.ReceiveAsync(packet => packet.StartsWith("40", StringComparison.Ordinal), "the namespace's connect", cancellationToken);
            await polling.SendAsync("""420["transport"]""", cancellationToken);
            string reply = await polling.ReceiveAsync(packet => packet.StartsWith("430", StringComparison.Ordinal), "the acknowledgement over polling", cancellationToken);
            string transport = JsonNode.Parse(reply[3..])!.AsArray()[0]!.GetValue<string>();

            var socket = new ClientWebSocket();
            try
            {
                socket.Options.SetRequestHeader("Origin", polling.Origin);
                using var invoker = new HttpMessageInvoker(browser.Handler());
                await socket.ConnectAsync(polling.WebSocketUrl(), invoker, cancellationToken);
                await SendTextAsync(socket, "2probe", cancellationToken);
                string probe = await ReceiveTextAsync(socket, cancellationToken);
                Assert.True(probe == "3probe", $"The upgrade's probe was answered with '{probe}'.");
                await SendTextAsync(socket, "5", cancellationToken);
            }
            catch
            {
                socket.Dispose();
                throw;
            }

            return new SocketIoClient(socket, transport);
        }
    }

    /// <summary>Emits <paramref name="name"/> with <paramref name="arguments"/> and returns the server's acknowledgement.</summary>
    public async Task<JsonArray> CallAsync(string name, params JsonNode?[] arguments)
    {
        int id = Interlocked.Increment(ref _lastAcknowledgement);
        var acknowledged = new TaskCompletionSource<JsonArray>(TaskCreationOptions.RunContinuationsAsynchronously);
        _acknowledgements[id] = acknowledged;
        await SendAsync($"42{id}{new JsonArray([JsonValue.Create(name), .. arguments]).ToJsonString()}");
        return await acknowledged.Task.WaitAsync(TimeSpan.FromSeconds(60));
    }

    /// <summary>The first argument of every <paramref name="name"/> event received so far, in order.</summary>
    public IReadOnlyList<JsonNode?> Received(string name)
    {
        lock (_events)
        {
            return _events.Where(e => e.Name == name).Select(e => e.Arguments.Count > 0 ? e.Arguments[0] : null).ToList();
        }
    }

    public async ValueTask DisposeAsync()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        try
        {
            await _socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, timeout.Token);
        }
        catch (Exception ex) when (ex is WebSocketException or OperationCanceledException or ObjectDisposedException)
        {
            // already closed by the server or broken: nothing to say goodbye to
        }

        await _stop.CancelAsync();
        await _receiving;
        _socket.Dispose();
        _stop.Dispose();
        _sending.Dispose();
    }

    private async Task SendAsync(string packet)
    {
        await _sending.WaitAsync(_stop.Token);
        try
        {
            await SendTextAsync(_socket, packet, _stop.Token);
        }
        finally
        {
            _sending.Release();
        }
    }

    private async Task ReceiveAsync()
    {
        try
        {
            while (!_stop.IsCancellationRequested)
            {
                string packet = await ReceiveTextAsync(_socket, _stop.Token);
                if (packet == "2")
                {
                    await SendAsync("3"); // the server's ping
                }
                else if (packet.StartsWith("42", StringComparison.Ordinal) || packet.StartsWith("43", StringComparison.Ordinal))
                {
                    Dispatch(packet);
                }
            }
        }
        catch (Exception ex) when (ex is WebSocketException or OperationCanceledException or InvalidOperationException)
        {
            foreach (TaskCompletionSource<JsonArray> waiting in _acknowledgements.Values)
            {
                waiting.TrySetException(new InvalidOperationException("The socket.io connection ended before its acknowledgement.", ex));
            }
        }
    }

    private void Dispatch(string packet)
    {
        int arguments = packet.IndexOf('[', StringComparison.Ordinal);
        JsonArray data = JsonNode.Parse(packet[arguments..])!.AsArray();
        if (packet[1] == '3')
        {
            int id = int.Parse(packet.AsSpan(2, arguments - 2), System.Globalization.CultureInfo.InvariantCulture);
            if (_acknowledgements.TryRemove(id, out TaskCompletionSource<JsonArray>? waiting))
            {
                waiting.TrySetResult(data);
            }

            return;
        }

        string name = data[0]!.GetValue<string>();
        data.RemoveAt(0);
        lock (_events)
        {
            _events.Add((name, data));
        }
    }

    private static Task SendTextAsync(ClientWebSocket socket, string text, CancellationToken cancellationToken) =>
        socket.SendAsync(Encoding.UTF8.GetBytes(text), WebSocketMessageType.Text, endOfMessage: true, cancellationToken);

    private static async Task<string> ReceiveTextAsync(ClientWebSocket socket, CancellationToken cancellationToken)
    {
        using var message = new MemoryStream();
        byte[] buffer = new byte[4096];
        WebSocketReceiveResult result;
        do
        {
            result = await socket.ReceiveAsync(buffer, cancellationToken);
            if (result.MessageType == WebSocketMessageType.Close)
            {
                throw new InvalidOperationException($"The socket.io WebSocket closed: {result.CloseStatus} {result.CloseStatusDescription}");
            }

            message.Write(buffer, 0, result.Count);
        }
        while (!result.EndOfMessage);

        return Encoding.UTF8.GetString(message.ToArray());
    }

    /// <summary>Engine.IO's HTTP long-polling transport, used until the upgrade.</summary>
    private sealed class EngineIoPolling(PublicBrowser browser, Uri endpoint) : IDisposable
    {
        private readonly HttpClient _http = browser.Client();
        private string _sid = "";

        public string Origin { get; } = endpoint.GetLeftPart(UriPartial.Authority);

        /// <summary>Opens the Engine.IO session.</summary>
        public async Task HandshakeAsync(CancellationToken cancellationToken)
        {
            string open = await GetAsync(cancellationToken);
            Assert.True(open.StartsWith('0'), $"The Engine.IO handshake answered '{open}'.");
            _sid = JsonNode.Parse(open[1..])!["sid"]!.GetValue<string>();
        }

        public Uri WebSocketUrl() => new UriBuilder(Url("websocket")) { Scheme = endpoint.Scheme == "https" ? "wss" : "ws" }.Uri;

        public async Task SendAsync(string packet, CancellationToken cancellationToken)
        {
            using var request = Request(HttpMethod.Post);
            request.Content = new StringContent(packet, Encoding.UTF8, "text/plain");
            using HttpResponseMessage response = await _http.SendAsync(request, cancellationToken);
            string body = await response.Content.ReadAsStringAsync(cancellationToken);
            Assert.True(response.StatusCode == HttpStatusCode.OK && body.Equals("ok", StringComparison.OrdinalIgnoreCase), $"Posting '{packet}' over polling: {response.StatusCode} {body}");
        }

        /// <summary>Polls until a packet <paramref name="wanted"/> takes arrives, answering pings on the way.</summary>
        public async Task<string> ReceiveAsync(Func<string, bool> wanted, string what, CancellationToken cancellationToken)
        {
            while (true)
            {
                foreach (string packet in (await GetAsync(cancellationToken)).Split(PacketSeparator))
                {
                    if (wanted(packet))
                    {
                        return packet;
                    }

                    if (packet == "2")
                    {
                        await SendAsync("3", cancellationToken);
                    }
                    else if (packet != "6")
                    {
                        Assert.Fail($"Waiting for {what} over polling, the server sent '{packet}'.");
                    }
                }
            }
        }

        public void Dispose() => _http.Dispose();

        private async Task<string> GetAsync(CancellationToken cancellationToken)
        {
            using var request = Request(HttpMethod.Get);
            using HttpResponseMessage response = await _http.SendAsync(request, cancellationToken);
            string body = await response.Content.ReadAsStringAsync(cancellationToken);
            Assert.True(response.StatusCode == HttpStatusCode.OK, $"Polling {request.RequestUri}: {response.StatusCode} {body}");
            return body;
        }

        private HttpRequestMessage Request(HttpMethod method)
        {
            var request = new HttpRequestMessage(method, Url("polling"));
            request.Headers.TryAddWithoutValidation("Origin", Origin);
            return request;
        }

        private Uri Url(string transport) =>
            new(endpoint, $"?EIO=4&transport={transport}{(_sid.Length > 0 ? "&sid=" + Uri.EscapeDataString(_sid) : "")}");
    }
}
