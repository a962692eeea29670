using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// The byte-stream body layer of upgraded connections (<c>UplinkStream.Outbound.cs</c>, <c>UplinkStream.Inbound.cs</c>): a source read straight into
/// frames, the inbound buffer written straight to a destination, both under the windows, and each end a half-close.
/// </summary>
public sealed class ByteStreamTests
{
    [Fact]
    public async Task Bytes_cross_both_ways_between_streams_and_each_end_is_a_half_close()
    {
        await using var pair = UplinkPair.Start();
        byte[] up = StreamExchangeTests.Pattern(1_000_000, seed: 31);
        byte[] down = StreamExchangeTests.Pattern(700_000, seed: 32);
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/ws", [new("Upgrade", "websocket")]), endStream: false);
        client.SendResponseHead(new ResponseHead(101, []), endStream: false);
        await server.ReadResponseHeadAsync().WithTimeout();

        using var atClient = new MemoryStream();
        Task serverSends = server.SendStreamAsync(new MemoryStream(up), CancellationToken.None);
        Task clientReceives = client.CopyInputToAsync(atClient, CancellationToken.None);
        await Task.WhenAll(serverSends, clientReceives).WithTimeout();
        Assert.Equal(up, atClient.ToArray());

        // The server's side has ended; the client's may still send, and ends the exchange when it does.
        using var atServer = new MemoryStream();
        Task clientSends = client.SendStreamAsync(new MemoryStream(down), CancellationToken.None);
        Task serverReceives = server.CopyInputToAsync(atServer, CancellationToken.None);
        await Task.WhenAll(clientSends, serverReceives).WithTimeout();
        Assert.Equal(down, atServer.ToArray());
        Assert.Null(server.ResetCode);
    }

    [Fact]
    public async Task A_read_that_may_wait_asks_for_little_and_one_after_a_full_read_asks_for_a_whole_frame()
    {
        await using var pair = UplinkPair.Start(new UplinkSettings { InitialStreamWindow = 1024 * 1024 });
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/ws", [new("Upgrade", "websocket")]), endStream: false);
        client.SendResponseHead(new ResponseHead(101, []), endStream: false);
        await server.ReadResponseHeadAsync().WithTimeout();
        var source = new RecordingSource(totalBytes: 600_000);

        await client.SendStreamAsync(source, CancellationToken.None).WithTimeout();

        Assert.Equal(IByteStream.WaitingReadSize, source.Asked[0]);
        Assert.Equal(new UplinkSettings().DataChunkSize, source.Asked[1]);
        Assert.Equal(600_000, (await server.ReadAllAsync()).Length);
    }

    /// <summary>A source that fills every read it is given, up to its total, and records how much each read asked for.</summary>
    private sealed class RecordingSource(int totalBytes) : Stream
    {
        private int _left = totalBytes;

        public List<int> Asked { get; } = [];

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            Asked.Add(buffer.Length);
            int length = Math.Min(buffer.Length, _left);
            buffer.Span[..length].Fill(0x5A);
            _left -= length;
            return ValueTask.FromResult(length);
        }

        public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
