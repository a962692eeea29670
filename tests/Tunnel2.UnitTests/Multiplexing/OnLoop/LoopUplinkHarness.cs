using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Tunnel2.Loops;
using Tunnel2.Loops.Guard;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing.OnLoop;

/// <summary>
/// A client-role uplink on an event loop (<see cref="Uplink.OnLoop"/>) over a real loopback connection. The far end is
/// either a server-role uplink on the runtime's sockets (<see cref="StartWithServer"/>) or a raw socket the test plays
/// (<see cref="StartRaw"/>). Logging goes through <see cref="LoopGuardLoggerProvider"/>: a line logged on the loop
/// faults there; faults and error lines fail the test at dispose.
/// </summary>
internal sealed class LoopUplinkHarness : IAsyncDisposable
{
    private readonly ILoggerFactory _logging;
    private readonly LogRecorder _recorder = new LogRecorder();
    private readonly ConcurrentQueue<Exception> _faults = new();
    private readonly Socket _serverSocket;
    private readonly NetworkStream? _serverStream;

    private LoopUplinkHarness(Socket clientSocket, Socket serverSocket, bool withServer, UplinkSettings settings, bool expectErrors)
    {
        ExpectErrors = expectErrors;
        _settings = settings;
        _clientSocket = clientSocket;
        _logging = LoggerFactory.Create(builder => builder.AddProvider(new LoopGuardLoggerProvider()).AddProvider(_recorder).SetMinimumLevel(LogLevel.Trace));
        Loop = new EventLoop("test-uplink-loop", _faults.Enqueue);
        _serverSocket = serverSocket;
        if (withServer)
        {
            _serverStream = new NetworkStream(serverSocket, ownsSocket: false);
            Server = new Uplink(DuplexPipe.Over(_serverStream), settings, UplinkRole.Server, _logging.CreateLogger("server"), name: "test-server");
            ServerRun = Server.RunAsync();
        }
    }

    private readonly UplinkSettings _settings;
    private readonly Socket _clientSocket;

    private void StartClient(byte[] early)
    {
        Client = Uplink.OnLoop(Loop, _clientSocket, early, _settings, _logging.CreateLogger("client"), Handler, "test-client-on-loop");
        ClientRun = Client.RunAsync();
    }

    public EventLoop Loop { get; }

    public Uplink Client { get; private set; } = null!;

    public Task ClientRun { get; private set; } = Task.CompletedTask;

    public Uplink? Server { get; }

    public Task ServerRun { get; } = Task.CompletedTask;

    /// <summary>The test's end of the connection when there is no server uplink.</summary>
    public Socket Raw => _serverSocket;

    public RecordingStreamHandler Handler { get; } = new();

    public bool ExpectErrors { get; }

    public IReadOnlyCollection<string> Lines => _recorder.Lines;

    /// <summary>A server uplink on the runtime's sockets and the client on the loop, both running.</summary>
    /// <param name="beforeClient">Runs with the server uplink before the client's exists (e.g. opens a stream).</param>
    /// <param name="early">How many of the server's first bytes the test then reads off the client's socket before the
    /// loop takes it, as the handshake's reader does past its response head; they go to the uplink as its first bytes.</param>
    public static async Task<LoopUplinkHarness> StartWithServer(UplinkSettings? settings = null, Action<Uplink>? beforeClient = null, int early = 0)
    {
        (Socket client, Socket server) = await ConnectedPairAsync();
        var harness = new LoopUplinkHarness(client, server, withServer: true, settings ?? new UplinkSettings(), expectErrors: false);
        beforeClient?.Invoke(harness.Server!);
        byte[] earlyBytes = new byte[early];
        int read = 0;
        while (read < early)
        {
            read += await client.ReceiveAsync(earlyBytes.AsMemory(read), SocketFlags.None).AsTask().WithTimeout();
        }

        harness.StartClient(earlyBytes);
        return harness;
    }

    /// <summary>The client on the loop against a raw socket the test plays; <paramref name="early"/> are the client's first bytes.</summary>
    public static async Task<LoopUplinkHarness> StartRaw(byte[]? early = null, UplinkSettings? settings = null, bool expectErrors = false)
    {
        (Socket client, Socket server) = await ConnectedPairAsync();
        var harness = new LoopUplinkHarness(client, server, withServer: false, settings ?? new UplinkSettings(), expectErrors);
        harness.StartClient(early ?? []);
        return harness;
    }

    public static async Task<(Socket Client, Socket Server)> ConnectedPairAsync()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        client.Connect(listener.LocalEndPoint!); // synchronous, as a handshake that leaves the socket out of the runtime's epoll
        Socket server = await listener.AcceptAsync().WithTimeout();
        server.NoDelay = true;
        return (client, server);
    }

    public int FaultCount => _faults.Count;

    public async ValueTask DisposeAsync()
    {
        Server?.Close("test finished");
        Client.Close("test finished");
        await Task.WhenAll(ServerRun, ClientRun).WithTimeout();
        Server?.Dispose();
        Client.Dispose();
        Loop.Dispose();
        _serverStream?.Dispose();
        _serverSocket.Dispose();
        _logging.Dispose();
        Assert.Empty(_faults);
        if (!ExpectErrors)
        {
            Assert.Empty(_recorder.Errors);
        }
    }
}
