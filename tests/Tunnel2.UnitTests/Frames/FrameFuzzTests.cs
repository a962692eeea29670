using System.Buffers;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.UnitTests.Heads;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Frames;

/// <summary>
/// Random and mutated bytes through <see cref="FrameReader"/> and <see cref="HeadCodec"/>: the only exception that may
/// escape is <see cref="ProtocolViolationException"/>, and no payload is ever longer than the maximum. The seed is fixed
/// and printed; set TUNNEL2_FUZZ_SEED to try another.
/// </summary>
[Collection(SerialCollection.Name)]
public sealed class FrameFuzzTests(ITestOutputHelper output)
{
    private const int MaxPayload = 4096;
    private const int MutatedSamples = 120_000;
    private const int RandomSamples = 60_000;
    private const int HeadSamples = 100_000;

    [Fact]
    public void Mutated_valid_frames_only_ever_raise_protocol_violations()
    {
        int seed = FuzzSeed.Get(0x7E2_2026);
        output.WriteLine($"seed {seed}");
        var random = new Random(seed);
        var stats = new FuzzStats();

        for (int i = 0; i < MutatedSamples; i++)
        {
            byte[] valid = RandomFrames.Valid(random, (FrameType)random.Next(1, 10), (uint)random.Next(0, 5));
            byte[] sample = RandomFrames.Mutate(random, valid);
            Feed(sample, random, stats, seed, i);
        }

        output.WriteLine(stats.ToString());
        stats.AssertBothPathsExercised();
    }

    [Fact]
    public void Random_bytes_only_ever_raise_protocol_violations()
    {
        int seed = FuzzSeed.Get(0x0BAD_F00D);
        output.WriteLine($"seed {seed}");
        var random = new Random(seed);
        var stats = new FuzzStats();

        for (int i = 0; i < RandomSamples; i++)
        {
            byte[] sample = RandomFrames.Bytes(random, random.Next(0, 80));
            if (sample.Length >= FrameHeader.Size && random.Next(2) == 0)
            {
                // Half the time, a header that gets past the first checks so the payload paths run too.
                System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(sample, random.Next(0, sample.Length));
                sample[4] = (byte)random.Next(0, 10);
            }

            Feed(sample, random, stats, seed, i);
        }

        output.WriteLine(stats.ToString());
        stats.AssertBothPathsExercised(expectDecodedHeads: false); // random bytes almost never form a head
    }

    [Fact]
    public void Mutated_head_payloads_only_ever_raise_protocol_violations_and_decode_consistently()
    {
        int seed = FuzzSeed.Get(0x4EAD);
        output.WriteLine($"seed {seed}");
        var random = new Random(seed);
        int decoded = 0;
        int rejected = 0;

        for (int i = 0; i < HeadSamples; i++)
        {
            bool request = random.Next(2) == 0;
            byte[] valid = request ? FrameBytes.Encode(RandomFrames.Request(random)) : FrameBytes.Encode(RandomFrames.Response(random));
            byte[] sample = random.Next(10) == 0 ? valid : RandomFrames.Mutate(random, valid);
            ReadOnlySequence<byte> payload = random.Next(3) == 0 ? Sequences.RandomlySplit(sample, random, 6) : new ReadOnlySequence<byte>(sample);
            try
            {
                if (request)
                {
                    RequestHead head = HeadCodec.ReadRequestHead(payload);
                    if (!head.Method.Contains('\uFFFD', StringComparison.Ordinal))
                    {
                        // Whatever decodes re-encodes to something that decodes the same.
                        HeadCodecRoundTripTests.AssertSame(head, HeadCodec.ReadRequestHead(new ReadOnlySequence<byte>(FrameBytes.Encode(head))));
                    }
                }
                else
                {
                    ResponseHead head = HeadCodec.ReadResponseHead(payload);
                    HeadCodecRoundTripTests.AssertSame(head, HeadCodec.ReadResponseHead(new ReadOnlySequence<byte>(FrameBytes.Encode(head))));
                }

                decoded++;
            }
            catch (ProtocolViolationException)
            {
                rejected++;
            }
            catch (Exception ex)
            {
                Assert.Fail($"seed {seed}, sample {i}: {ex.GetType().Name}: {ex.Message}\n{FrameBytes.Hex(sample)}");
            }
        }

        output.WriteLine($"{decoded} heads decoded, {rejected} rejected");
        Assert.InRange(decoded, HeadSamples / 20, HeadSamples);
        Assert.InRange(rejected, HeadSamples / 20, HeadSamples);
    }

    [Fact]
    public void Unmutated_random_frames_always_read_back_exactly()
    {
        var random = new Random(FuzzSeed.Get(1234));
        for (int i = 0; i < 5_000; i++)
        {
            var type = (FrameType)random.Next(1, 10);
            byte[] frame = RandomFrames.Valid(random, type, (uint)random.Next(1, 100));
            ReadOnlySequence<byte> buffer = Sequences.RandomlySplit(frame, random, 16);

            Assert.True(FrameReader.TryReadFrame(ref buffer, MaxPayload, out FrameHeader header, out ReadOnlySequence<byte> payload));

            Assert.Equal(type, header.Type);
            Assert.Equal(frame[FrameHeader.Size..], payload.ToArray());
            Assert.True(buffer.IsEmpty);
            if (type == FrameType.RequestHead)
            {
                HeadCodec.ReadRequestHead(payload);
            }
            else if (type == FrameType.ResponseHead)
            {
                HeadCodec.ReadResponseHead(payload);
            }
        }
    }

    private static void Feed(byte[] sample, Random random, FuzzStats stats, int seed, int index)
    {
        ReadOnlySequence<byte> buffer = random.Next(4) == 0 ? Sequences.RandomlySplit(sample, random, 12) : new ReadOnlySequence<byte>(sample);
        try
        {
            while (true)
            {
                long before = buffer.Length;
                if (!FrameReader.TryReadFrame(ref buffer, MaxPayload, out FrameHeader header, out ReadOnlySequence<byte> payload))
                {
                    stats.Incomplete++;
                    Assert.Equal(before, buffer.Length);
                    return;
                }

                stats.Frames++;
                Assert.InRange(payload.Length, 0, MaxPayload);
                Assert.Equal(header.PayloadLength, payload.Length);
                Assert.Equal(before - FrameHeader.Size - payload.Length, buffer.Length);
                Assert.InRange((byte)header.Type, (byte)FrameType.RequestHead, (byte)FrameType.TcpOpen);
                DecodeHeads(payload, stats);
            }
        }
        catch (ProtocolViolationException)
        {
            stats.FrameViolations++;
        }
        catch (Exception ex)
        {
            Assert.Fail($"seed {seed}, sample {index}: {ex.GetType().Name}: {ex.Message}\n{FrameBytes.Hex(sample)}");
        }
    }

    /// <summary>Any payload goes through both head decoders, whatever its frame type said.</summary>
    private static void DecodeHeads(ReadOnlySequence<byte> payload, FuzzStats stats)
    {
        try
        {
            HeadCodec.ReadRequestHead(payload);
            stats.HeadsDecoded++;
        }
        catch (ProtocolViolationException)
        {
            stats.HeadViolations++;
        }

        try
        {
            HeadCodec.ReadResponseHead(payload);
            stats.HeadsDecoded++;
        }
        catch (ProtocolViolationException)
        {
            stats.HeadViolations++;
        }
    }

    private sealed class FuzzStats
    {
        public int Frames { get; set; }

        public int Incomplete { get; set; }

        public int FrameViolations { get; set; }

        public int HeadsDecoded { get; set; }

        public int HeadViolations { get; set; }

        public void AssertBothPathsExercised(bool expectDecodedHeads = true)
        {
            Assert.True(Frames > 1000, $"only {Frames} frames were read whole");
            Assert.True(FrameViolations > 1000, $"only {FrameViolations} frame violations");
            Assert.True(Incomplete > 1000, $"only {Incomplete} incomplete buffers");
            Assert.True(!expectDecodedHeads || HeadsDecoded > 100, $"only {HeadsDecoded} heads decoded");
            Assert.True(HeadViolations > 1000, $"only {HeadViolations} head violations");
        }

        public override string ToString() =>
            $"{Frames} frames read, {Incomplete} incomplete, {FrameViolations} frame violations, {HeadsDecoded} heads decoded, {HeadViolations} head violations";
    }
}
