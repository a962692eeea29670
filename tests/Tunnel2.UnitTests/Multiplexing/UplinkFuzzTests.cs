using System.IO.Pipelines;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// Garbage into real uplinks: RunAsync always completes, never throws, and a broken stream of bytes always closes the
/// uplink as a protocol error, never as an internal error. Seeds are fixed and printed.
/// </summary>
[Collection(SerialCollection.Name)]
public sealed class UplinkFuzzTests(ITestOutputHelper output)
{
    [Fact]
    public async Task Random_bytes_into_a_server_uplink_close_it_with_a_protocol_error()
    {
        int seed = FuzzSeed.Get(424242);
        output.WriteLine($"seed {seed}");
        var random = new Random(seed);

        for (int i = 0; i < 1000; i++)
        {
            byte[] garbage = RandomFrames.Bytes(random, random.Next(1, 4096));
            var toUplink = new Pipe();
            var fromUplink = new Pipe();
            var uplink = new Uplink(new DuplexPipe(toUplink.Reader, fromUplink.Writer), new UplinkSettings(), UplinkRole.Server, NullLogger.Instance);
            Task run = uplink.RunAsync();

            // Random pieces, and the connection left open: the uplink must find the violation in the bytes themselves.
            int offset = 0;
            while (offset < garbage.Length && uplink.IsOpen)
            {
                int size = Math.Min(garbage.Length - offset, random.Next(1, 600));
                await toUplink.Writer.WriteAsync(garbage.AsMemory(offset, size));
                offset += size;
            }

            await toUplink.Writer.CompleteAsync();
            await run.WithTimeout();

            Assert.False(uplink.IsOpen);
            Assert.True(uplink.CloseReason!.StartsWith("protocol error", StringComparison.Ordinal),
                $"seed {seed}, sample {i}: closed with '{uplink.CloseReason}' after {FrameBytes.Hex(garbage.AsSpan(0, Math.Min(32, garbage.Length)))}...");
            await fromUplink.Reader.CompleteAsync();
        }
    }

    [Fact]
    public async Task Random_bytes_after_a_valid_ping_are_answered_first_then_rejected()
    {
        var random = new Random(FuzzSeed.Get(7));
        await using var peer = RawPeer.ForServer();

        await peer.SendAsync(FrameBytes.Concat(FrameBytes.Frame(FrameType.Ping, 0, FrameBytes.U64(5)), [0xFF, 0xFF, 0xFF, 0xFF], RandomFrames.Bytes(random, 100)));

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
        ReceivedFrame? pong = await peer.ReadFrameAsync();
        Assert.NotNull(pong);
        Assert.Equal(FrameType.Pong, pong.Header.Type);
    }

    [Fact]
    public async Task Mutated_conversations_into_a_client_uplink_never_cause_an_internal_error()
    {
        int seed = FuzzSeed.Get(31337);
        output.WriteLine($"seed {seed}");
        var random = new Random(seed);
        var reasons = new Dictionary<string, int>(StringComparer.Ordinal);

        for (int i = 0; i < 2000; i++)
        {
            byte[] conversation = RandomFrames.Mutate(random, ServerToClientConversation(random));
            var handler = new RecordingStreamHandler { OnOpened = stream => { if (stream.Id % 2 == 0) { stream.Dispose(); } } };
            string reason = await FeedAsync(UplinkRole.Client, handler, conversation, random, seed, i);
            Count(reasons, reason);
        }

        output.WriteLine(string.Join(Environment.NewLine, reasons.Select(r => $"{r.Value,5} {r.Key}")));
        Assert.Contains(reasons.Keys, r => r.StartsWith("protocol error", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Mutated_conversations_into_a_server_uplink_never_cause_an_internal_error()
    {
        int seed = FuzzSeed.Get(27182);
        output.WriteLine($"seed {seed}");
        var random = new Random(seed);
        var reasons = new Dictionary<string, int>(StringComparer.Ordinal);

        for (int i = 0; i < 2000; i++)
        {
            byte[] conversation = RandomFrames.Mutate(random, ClientToServerConversation(random));
            string reason = await FeedAsync(UplinkRole.Server, null, conversation, random, seed, i);
            Count(reasons, reason);
        }

        output.WriteLine(string.Join(Environment.NewLine, reasons.Select(r => $"{r.Value,5} {r.Key}")));
        Assert.Contains(reasons.Keys, r => r.StartsWith("protocol error", StringComparison.Ordinal));
    }

    /// <summary>Runs one uplink over the bytes, then ends the connection; returns the close reason, truncated to its kind.</summary>
    private static async Task<string> FeedAsync(UplinkRole role, RecordingStreamHandler? handler, byte[] bytes, Random random, int seed, int index)
    {
        var toUplink = new Pipe();
        var fromUplink = new Pipe();
        var uplink = new Uplink(new DuplexPipe(toUplink.Reader, fromUplink.Writer), new UplinkSettings { InitialStreamWindow = 256 }, role, NullLogger.Instance, handler);
        Task run = uplink.RunAsync();
        if (role == UplinkRole.Server)
        {
            for (int s = 0; s < 3; s++)
            {
                uplink.OpenStreamOrFail(new RequestHead("POST", "/", []), endStream: s == 2);
            }
        }

        int offset = 0;
        while (offset < bytes.Length)
        {
            int size = Math.Min(bytes.Length - offset, random.Next(1, 64));
            await toUplink.Writer.WriteAsync(bytes.AsMemory(offset, size));
            offset += size;
        }

        await toUplink.Writer.CompleteAsync();
        await run.WithTimeout();
        await fromUplink.Reader.CompleteAsync();

        string reason = uplink.CloseReason ?? "(none)";
        Assert.True(reason.StartsWith("protocol error", StringComparison.Ordinal) || reason == "peer closed the connection",
            $"seed {seed}, sample {index}: {role} uplink closed with '{reason}' on {FrameBytes.Hex(bytes)}");
        int colon = reason.IndexOf(':', StringComparison.Ordinal);
        return colon < 0 ? reason : reason[..colon];
    }

    private static byte[] ServerToClientConversation(Random random)
    {
        var frames = new List<byte[]>
        {
            FrameBytes.Frame(FrameType.RequestHead, 1, FrameBytes.Encode(RandomFrames.Request(random))),
            FrameBytes.Frame(FrameType.Data, 1, RandomFrames.Bytes(random, random.Next(0, 200))),
            FrameBytes.Frame(FrameType.RequestHead, FrameFlags.EndStream, 2, FrameBytes.Encode(RandomFrames.Request(random))),
            FrameBytes.Frame(FrameType.WindowUpdate, 1, FrameBytes.U32(100)),
            FrameBytes.Frame(FrameType.Ping, 0, FrameBytes.U64(1)),
            FrameBytes.Frame(FrameType.Data, FrameFlags.EndStream, 1, RandomFrames.Bytes(random, random.Next(0, 50))),
            FrameBytes.Frame(FrameType.RequestHead, 3, FrameBytes.Encode(RandomFrames.Request(random))),
            FrameBytes.Frame(FrameType.Reset, 3, FrameBytes.U32((uint)ProtocolErrorCode.Cancelled)),
            FrameBytes.Frame(FrameType.Pong, 0, FrameBytes.U64(2)),
            FrameBytes.Frame(FrameType.GoAway, 0, FrameBytes.GoAway(3, ProtocolErrorCode.NoError)),
        };
        return FrameBytes.Concat([.. frames]);
    }

    private static byte[] ClientToServerConversation(Random random)
    {
        var frames = new List<byte[]>
        {
            FrameBytes.Frame(FrameType.ResponseHead, 1, FrameBytes.Encode(RandomFrames.Response(random))),
            FrameBytes.Frame(FrameType.WindowUpdate, 1, FrameBytes.U32(1000)),
            FrameBytes.Frame(FrameType.Data, 1, RandomFrames.Bytes(random, random.Next(0, 200))),
            FrameBytes.Frame(FrameType.ResponseHead, FrameFlags.EndStream, 3, FrameBytes.Encode(RandomFrames.Response(random))),
            FrameBytes.Frame(FrameType.Reset, 2, FrameBytes.U32((uint)ProtocolErrorCode.BackendUnreachable)),
            FrameBytes.Frame(FrameType.Ping, 0, FrameBytes.U64(1)),
            FrameBytes.Frame(FrameType.Data, FrameFlags.EndStream, 1, RandomFrames.Bytes(random, random.Next(0, 50))),
            FrameBytes.Frame(FrameType.GoAway, 0, FrameBytes.GoAway(0, ProtocolErrorCode.NoError)),
        };
        return FrameBytes.Concat([.. frames]);
    }

    private static void Count(Dictionary<string, int> reasons, string reason) =>
        reasons[reason] = reasons.GetValueOrDefault(reason) + 1;
}
