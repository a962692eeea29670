using System.Buffers;
using System.IO.Pipelines;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.UnitTests.Infrastructure;

internal sealed record ReceivedFrame(FrameHeader Header, byte[] Payload);

/// <summary>
/// One running uplink whose peer is the test itself: the test writes raw frame bytes into the uplink and reads the
/// frames the uplink writes back, so every byte on the wire is under its control.
/// </summary>
internal sealed class RawPeer : IAsyncDisposable
{
    private readonly Pipe _toUplink = new();
    private readonly Pipe _fromUplink = new();
    private ulong _pingSequence = 0x7E57_0000_0000_0000;

    private RawPeer(UplinkRole role, UplinkSettings settings, RecordingStreamHandler? handler)
    {
        Handler = handler;
        Uplink = new Uplink(new DuplexPipe(_toUplink.Reader, _fromUplink.Writer), settings, role, NullLogger.Instance, handler, $"raw-{role}");
        Run = Uplink.RunAsync();
    }

    public Uplink Uplink { get; }

    public Task Run { get; }

    public RecordingStreamHandler? Handler { get; }

    /// <summary>A server-role uplink; the test plays the client.</summary>
    public static RawPeer ForServer(UplinkSettings? settings = null) => new(UplinkRole.Server, settings ?? new UplinkSettings(), null);

    /// <summary>A client-role uplink; the test plays the server.</summary>
    public static RawPeer ForClient(UplinkSettings? settings = null, RecordingStreamHandler? handler = null) =>
        new(UplinkRole.Client, settings ?? new UplinkSettings(), handler ?? new RecordingStreamHandler());

    public async Task SendAsync(byte[] bytes)
    {
        await _toUplink.Writer.WriteAsync(bytes);
    }

    public Task SendFrameAsync(FrameType type, FrameFlags flags, uint streamId, byte[] payload) =>
        SendAsync(FrameBytes.Frame(type, flags, streamId, payload));

    public Task SendFrameAsync(FrameType type, uint streamId, byte[] payload) => SendFrameAsync(type, FrameFlags.None, streamId, payload);

    public void CompleteSending() => _toUplink.Writer.Complete();

    /// <summary>The next frame the uplink wrote, or null once it has completed its output.</summary>
    public async Task<ReceivedFrame?> ReadFrameAsync()
    {
        using var timeout = new CancellationTokenSource(TestTimeouts.Default);
        PipeReader reader = _fromUplink.Reader;
        while (true)
        {
            ReadResult result = await reader.ReadAsync(timeout.Token);
            ReadOnlySequence<byte> buffer = result.Buffer;
            if (FrameReader.TryReadFrame(ref buffer, int.MaxValue, out FrameHeader header, out ReadOnlySequence<byte> payload))
            {
                var frame = new ReceivedFrame(header, payload.ToArray());
                reader.AdvanceTo(buffer.Start);
                return frame;
            }

            reader.AdvanceTo(buffer.Start, buffer.End);
            if (result.IsCompleted)
            {
                return null;
            }
        }
    }

    /// <summary>Reads frames until one matches; returns it and the frames skipped on the way.</summary>
    public async Task<(ReceivedFrame Match, List<ReceivedFrame> Before)> ReadUntilAsync(Func<ReceivedFrame, bool> match)
    {
        var before = new List<ReceivedFrame>();
        while (true)
        {
            ReceivedFrame? frame = await ReadFrameAsync();
            Assert.NotNull(frame);
            if (match(frame))
            {
                return (frame, before);
            }

            before.Add(frame);
        }
    }

    /// <summary>
    /// A barrier: sends a Ping and waits for its Pong. The uplink handles frames in order and writes in order, so every
    /// frame it queued before handling this Ping is in the returned list.
    /// </summary>
    public async Task<List<ReceivedFrame>> PingRoundTripAsync()
    {
        ulong opaque = ++_pingSequence;
        await SendFrameAsync(FrameType.Ping, 0, FrameBytes.U64(opaque));
        (_, List<ReceivedFrame> before) = await ReadUntilAsync(f =>
            f.Header.Type == FrameType.Pong && System.Buffers.Binary.BinaryPrimitives.ReadUInt64BigEndian(f.Payload) == opaque);
        return before;
    }

    /// <summary>Waits for the uplink to stop by itself (it must not throw) and returns why it closed.</summary>
    public async Task<string> WaitClosedAsync()
    {
        await Run.WithTimeout();
        Assert.False(Uplink.IsOpen);
        return Uplink.CloseReason ?? string.Empty;
    }

    public async ValueTask DisposeAsync()
    {
        Uplink.Close("test finished");
        await _toUplink.Writer.CompleteAsync();
        await Run.WithTimeout();
        await _fromUplink.Reader.CompleteAsync();
        Uplink.Dispose();
    }
}
