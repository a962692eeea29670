using System.IO.Pipelines;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>
/// A running server-role uplink and a running client-role uplink joined by two in-memory pipes
/// (server output → client input, client output → server input). No sockets.
/// </summary>
internal sealed class UplinkPair : IAsyncDisposable
{
    private UplinkPair(Uplink server, Uplink client, RecordingStreamHandler handler)
    {
        Server = server;
        Client = client;
        Handler = handler;
        ServerRun = server.RunAsync();
        ClientRun = client.RunAsync();
    }

    public Uplink Server { get; }

    public Uplink Client { get; }

    public RecordingStreamHandler Handler { get; }

    public Task ServerRun { get; }

    public Task ClientRun { get; }

    public static UplinkPair Start(UplinkSettings? settings = null, RecordingStreamHandler? handler = null)
    {
        settings ??= new UplinkSettings();
        handler ??= new RecordingStreamHandler();
        var toClient = new Pipe();
        var toServer = new Pipe();
        var server = new Uplink(new DuplexPipe(toServer.Reader, toClient.Writer), settings, UplinkRole.Server, NullLogger.Instance, name: "test-server");
        var client = new Uplink(new DuplexPipe(toClient.Reader, toServer.Writer), settings, UplinkRole.Client, NullLogger.Instance, handler, "test-client");
        return new UplinkPair(server, client, handler);
    }

    /// <summary>Opens a stream on the server and waits for the client to see it.</summary>
    public async Task<(UplinkStream Server, UplinkStream Client)> OpenAsync(RequestHead head, bool endStream)
    {
        UplinkStream serverSide = Server.OpenStreamOrFail(head, endStream);
        UplinkStream clientSide = await Handler.NextAsync();
        Assert.Equal(serverSide.Id, clientSide.Id);
        return (serverSide, clientSide);
    }

    /// <summary>
    /// Returns once everything the server sent before the call has reached the client: a later exchange on a stream of
    /// its own has completed (the uplink delivers frames in order).
    /// </summary>
    public async Task BarrierAsync()
    {
        UplinkStream server = Server.OpenStreamOrFail(new RequestHead("GET", "/barrier", []), endStream: true);
        UplinkStream client = await Handler.NextAsync();
        client.SendResponseHead(new ResponseHead(204, []), endStream: true);
        await server.ReadResponseHeadAsync().WithTimeout();
    }

    public async ValueTask DisposeAsync()
    {
        Server.Close("test finished");
        Client.Close("test finished");
        await Task.WhenAll(ServerRun, ClientRun).WithTimeout();
        Server.Dispose();
        Client.Dispose();
    }
}

internal static class UplinkStreamReading
{
    /// <summary>Reads a stream's whole inbound body, reporting what it consumes so the window keeps opening.</summary>
    public static async Task<byte[]> ReadAllAsync(this UplinkStream stream)
    {
        using var body = new MemoryStream();
        using var timeout = new CancellationTokenSource(TestTimeouts.Default);
        await stream.CopyInputToAsync(PipeWriter.Create(body), chunked: false, timeout.Token);
        return body.ToArray();
    }
}
