using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Attempt;
using Tunnel2.TunnelClient.Relay.Exchange;
using Tunnel2.TunnelClient.Relay.Pipeline;
using Tunnel2.TunnelClient.Relay.Upgrades;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Relay.Steps;

/// <summary>One attempt on one backend, on its own: lease, head out, answer up, body, connection back; or a failure value.</summary>
public sealed class RelayAttemptTests : IAsyncDisposable
{
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();
    private readonly UplinkPair _uplinks = UplinkPair.Start();
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly TunnelClientMetrics _metrics;

    public RelayAttemptTests()
    {
        _metrics = new TunnelClientMetrics(_services.GetRequiredService<IMeterFactory>());
        _listener.Start();
    }

    public async ValueTask DisposeAsync()
    {
        _listener.Stop();
        _listener.Dispose();
        await _uplinks.DisposeAsync();
        await _services.DisposeAsync();
    }

    [Fact]
    public async Task An_answered_attempt_sends_the_answer_up_and_gives_its_connection_back_to_the_pool()
    {
        await using BackendSet backends = Backends(((IPEndPoint)_listener.LocalEndpoint).Port);
        (UplinkStream server, RelayExchange exchange) = await ExchangeAsync(backends);
        Task<Socket> backend = AnswerOnceAsync("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");

        AttemptResult result = await Attempt(backends).RunAsync(exchange).AsTask().WithTimeout();

        Assert.Equal(AttemptOutcome.Done, result.Outcome);
        Assert.Null(result.Failure);
        ResponseHead head = await server.ReadResponseHeadAsync().WithTimeout();
        Assert.Equal(200, head.StatusCode);
        Assert.Equal("hi", await ReadBodyAsync(server));
        Assert.Null(exchange.Connection);
        Assert.Equal(1, backends.All[0].Pool.IdleCount);
        using Socket accepted = await backend.WithTimeout();
    }

    [Fact]
    public async Task A_backend_that_refuses_the_connection_is_a_connect_failure_for_the_retry_step_to_judge()
    {
        int closedPort = ((IPEndPoint)_listener.LocalEndpoint).Port;
        _listener.Stop();
        await using BackendSet backends = Backends(closedPort);
        (UplinkStream _, RelayExchange exchange) = await ExchangeAsync(backends);

        AttemptResult result = await Attempt(backends).RunAsync(exchange).AsTask().WithTimeout();

        Assert.Equal(AttemptOutcome.ConnectFailed, result.Outcome);
        Assert.Equal(ProtocolErrorCode.BackendConnectFailed, result.Failure?.Code);
        Assert.Null(exchange.Connection);
    }

    /// <returns>The backend's end of the connection, left open as a keep-alive backend leaves it.</returns>
    private async Task<Socket> AnswerOnceAsync(string answer)
    {
        Socket accepted = await _listener.AcceptSocketAsync();
        var buffer = new byte[4096];
        var request = new StringBuilder();
        while (!request.ToString().Contains("\r\n\r\n", StringComparison.Ordinal))
        {
            int read = await accepted.ReceiveAsync(buffer);
            Assert.NotEqual(0, read);
            request.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }

        Assert.StartsWith("GET /hello HTTP/1.1\r\n", request.ToString(), StringComparison.Ordinal);
        await accepted.SendAsync(Encoding.ASCII.GetBytes(answer));
        return accepted;
    }

    private static async Task<string> ReadBodyAsync(UplinkStream server)
    {
        var body = new StringBuilder();
        while (true)
        {
            System.IO.Pipelines.ReadResult read = await server.Input.ReadAsync().AsTask().WithTimeout();
            foreach (ReadOnlyMemory<byte> segment in read.Buffer)
            {
                body.Append(Encoding.ASCII.GetString(segment.Span));
            }

            server.Input.AdvanceTo(read.Buffer.End);
            if (read.IsCompleted)
            {
                return body.ToString();
            }
        }
    }

    private BackendSet Backends(int port) => new(
        Options.Create(new TunnelClientOptions { Backends = new() { Urls = $"http://127.0.0.1:{port}" } }), _metrics, NullLogger<BackendSet>.Instance);

    private RelayAttempt Attempt(BackendSet backends) => new(
        new Http1Exchange(backends),
        new ResponseHeadForwarder(backends, new TunnelClientStatus(), _metrics),
        new UpgradeRelay(new UpgradedStreams(10, TimeSpan.FromMinutes(1), _metrics, NullLogger.Instance)));

    private Task<(UplinkStream Server, RelayExchange Exchange)> ExchangeAsync(BackendSet backends) =>
        RelaySteps.ExchangeAsync(_uplinks, new RequestHead("GET", "/hello", []), backends.All[0]);
}
