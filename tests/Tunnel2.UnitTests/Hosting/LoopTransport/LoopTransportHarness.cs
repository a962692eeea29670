using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;
using Tunnel2.Loops;
using Tunnel2.TunnelServer.Hosting.LoopTransport;
using Tunnel2.UnitTests.Loops;

namespace Tunnel2.UnitTests.Hosting.LoopTransport;

/// <summary>The loop transport bound on 127.0.0.1:0 over a test loop, with real client sockets; no Kestrel.</summary>
internal sealed class LoopTransportHarness : IAsyncDisposable
{
    private readonly LoopHarness _loop = new("transport-test-loop");
    private readonly LoopTransportFactory _factory;

    private LoopTransportHarness(LoopConnectionLimits limits, int receiveBuffer, int readBudgetPerTurn, bool callerHandover)
    {
        _factory = new LoopTransportFactory(() => _loop.Loop, at =>
        {
            var socket = new Socket(at.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            if (receiveBuffer > 0)
            {
                socket.ReceiveBufferSize = receiveBuffer; // inherited by the accepted sockets
            }

            socket.Bind(at);
            return socket;
        }, limits, MemoryPool<byte>.Shared, readBudgetPerTurn, callerHandover);
    }

    public IConnectionListener Listener { get; private set; } = null!;

    public int Port => ((IPEndPoint)Listener.EndPoint).Port;

    public int FaultCount => _loop.Faults.Count;

    public EventLoop Loop => _loop.Loop;

    public static async Task<LoopTransportHarness> StartAsync(long maxReadBuffer = 64 * 1024, long maxWriteBuffer = 64 * 1024, int receiveBuffer = 0,
        int readBudgetPerTurn = 0, bool callerHandover = false)
    {
        var harness = new LoopTransportHarness(new LoopConnectionLimits(maxReadBuffer, maxWriteBuffer), receiveBuffer, readBudgetPerTurn, callerHandover);
        Assert.True(harness._factory.CanBind(new LoopEndPoint(new IPEndPoint(IPAddress.Loopback, 0))));
        harness.Listener = await harness._factory.BindAsync(new LoopEndPoint(new IPEndPoint(IPAddress.Loopback, 0)));
        return harness;
    }

    /// <summary>A client connected, and the connection the transport accepted for it.</summary>
    public async Task<(Socket Client, ConnectionContext Server)> ConnectAsync(int receiveBuffer = 0)
    {
        var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        if (receiveBuffer > 0)
        {
            client.ReceiveBufferSize = receiveBuffer;
        }

        await client.ConnectAsync(new IPEndPoint(IPAddress.Loopback, Port)).WaitAsync(LoopHarness.Timeout);
        ConnectionContext? server = await Listener.AcceptAsync().AsTask().WaitAsync(LoopHarness.Timeout);
        Assert.NotNull(server);
        return (client, server);
    }

    /// <summary>Reads the input as Kestrel does; its continuation may run on the loop (inline reads), so it leaves it.</summary>
    public static async Task<ReadResult> ReadAsync(PipeReader input)
    {
        ReadResult result = await input.ReadAsync().AsTask().WaitAsync(LoopHarness.Timeout);
        if (EventLoop.IsLoopThread)
        {
            await Task.Yield(); // to the thread pool: a test's blocking calls must not stall the loop
        }

        return result;
    }

    /// <summary>Reads the input until it holds <paramref name="length"/> bytes or ends, consuming nothing.</summary>
    public static async Task<ReadResult> ReadAtLeastAsync(PipeReader input, long length)
    {
        while (true)
        {
            ReadResult result = await ReadAsync(input);
            if (result.Buffer.Length >= length || result.IsCompleted)
            {
                return result;
            }

            input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await Listener.UnbindAsync();
        await Listener.DisposeAsync();
        _factory.Dispose();
        _loop.Dispose();
    }
}
