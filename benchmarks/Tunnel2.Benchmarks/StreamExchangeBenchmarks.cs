using System.IO.Pipelines;
using BenchmarkDotNet.Attributes;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.Benchmarks;

/// <summary>
/// One small exchange through a running uplink pair joined by in-memory pipes (both roles, all their loops), with and
/// without a pool of finished <see cref="UplinkStream"/> objects (issue 14, item 2).
/// </summary>
[MemoryDiagnoser]
public class StreamExchangeBenchmarks
{
    private static readonly RequestHead Get = new("GET", "/loadtest/ping", []);
    private static readonly ResponseHead Ok = new(200, [new("Content-Type", "text/plain")]);

    private Uplink _server = null!;
    private Uplink _client = null!;
    private Task _runs = null!;

    /// <summary>Finished streams each uplink keeps (0: a new object per exchange, as before the pool).</summary>
    [Params(0, 100)]
    public int StreamPoolSize { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        var settings = new UplinkSettings { StreamPoolSize = StreamPoolSize };
        var toClient = new Pipe();
        var toServer = new Pipe();
        _server = new Uplink(new DuplexPipe(toServer.Reader, toClient.Writer), settings, UplinkRole.Server, NullLogger.Instance);
        _client = new Uplink(new DuplexPipe(toClient.Reader, toServer.Writer), settings, UplinkRole.Client, NullLogger.Instance, new PongHandler());
        _runs = Task.WhenAll(_server.RunAsync(), _client.RunAsync());
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _server.Close("benchmark finished");
        _client.Close("benchmark finished");
        _runs.GetAwaiter().GetResult();
        _server.Dispose();
        _client.Dispose();
    }

    /// <summary>A GET answered with a head and four body bytes, read to the end, both streams disposed.</summary>
    [Benchmark]
    public async Task<long> Exchange()
    {
        _server.TryOpenStream(Get, endStream: true, out IHttpExchange? opened);
        using UplinkStream stream = (UplinkStream?)opened ?? throw new InvalidOperationException("The benchmark uplink refused a stream.");
        await stream.ReadResponseHeadAsync().ConfigureAwait(false);
        long bytes = 0;
        while (true)
        {
            ReadResult result = await stream.Input.ReadAsync().ConfigureAwait(false);
            long length = result.Buffer.Length; // before AdvanceTo, which resets the segments the buffer points into
            bytes += length;
            stream.Input.AdvanceTo(result.Buffer.End);
            stream.OnInputConsumed(length);
            if (result.IsCompleted)
            {
                return bytes;
            }
        }
    }

    /// <summary>Answers every request at once, on the reader loop: a head, four bytes, the end.</summary>
    private sealed class PongHandler : IUplinkStreamHandler
    {
        private static readonly byte[] Body = "pong"u8.ToArray();

        public void OnByteStreamOpened(IByteStream stream) => throw new InvalidOperationException("The benchmark opens no TCP stream.");

        public void OnExchangeOpened(IHttpExchange exchange)
        {
            var stream = (UplinkStream)exchange;
            stream.SendResponseHead(Ok, endStream: false);
            byte[] pooled = System.Buffers.ArrayPool<byte>.Shared.Rent(Body.Length);
            Body.CopyTo(pooled, 0);
            stream.SendPooledData(pooled, Body.Length, endStream: true);
            stream.Dispose();
        }
    }
}
