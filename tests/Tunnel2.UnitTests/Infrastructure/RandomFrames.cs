using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>Valid frames and heads with random content, and random ways to break them.</summary>
internal static class RandomFrames
{
    private static readonly string[] Methods = ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS", "PROPFIND", "X"];
    private static readonly string[] Alphabet = ["a", "Z", "0", "/", "?", "=", "%2F", " ", "é", "✓", "😀", "-", ";", ""];

    public static string Text(Random random, int maxParts)
    {
        int parts = random.Next(0, maxParts + 1);
        var text = new System.Text.StringBuilder();
        for (int i = 0; i < parts; i++)
        {
            text.Append(Alphabet[random.Next(Alphabet.Length)]);
        }

        return text.ToString();
    }

    public static List<HeaderField> Headers(Random random)
    {
        int count = random.Next(0, 6);
        var headers = new List<HeaderField>(count);
        for (int i = 0; i < count; i++)
        {
            headers.Add(new HeaderField("X-" + Text(random, 4), Text(random, 8)));
        }

        return headers;
    }

    public static RequestHead Request(Random random) =>
        new(Methods[random.Next(Methods.Length)], "/" + Text(random, 10), Headers(random));

    public static ResponseHead Response(Random random) => new(random.Next(100, 1000), Headers(random));

    /// <summary>A well-formed frame of the given type with a plausible payload.</summary>
    public static byte[] Valid(Random random, FrameType type, uint streamId)
    {
        FrameFlags flags = random.Next(2) == 0 ? FrameFlags.None : FrameFlags.EndStream;
        byte[] payload = type switch
        {
            FrameType.RequestHead => FrameBytes.Encode(Request(random)),
            FrameType.ResponseHead => FrameBytes.Encode(Response(random)),
            FrameType.Data => Bytes(random, random.Next(0, 64)),
            FrameType.Reset => FrameBytes.U32((uint)random.Next(0, 12)),
            FrameType.WindowUpdate => FrameBytes.U32((uint)random.Next(1, 100_000)),
            FrameType.GoAway => FrameBytes.GoAway(streamId, (ProtocolErrorCode)random.Next(0, 12)),
            FrameType.Health => FrameBytes.U32((uint)random.Next(0, 2)),
            _ => Bytes(random, 8),
        };

        return FrameBytes.Frame(type, flags, type is FrameType.Ping or FrameType.Pong or FrameType.GoAway or FrameType.Health ? 0 : streamId, payload);
    }

    public static byte[] Bytes(Random random, int length)
    {
        var bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }

    /// <summary>Applies one to four random mutations: bit flips, overwrites, insertions, deletions, truncation, new lengths or types.</summary>
    public static byte[] Mutate(Random random, byte[] original)
    {
        var bytes = new List<byte>(original);
        int mutations = random.Next(1, 5);
        for (int m = 0; m < mutations; m++)
        {
            switch (random.Next(8))
            {
                case 0 when bytes.Count > 0:
                    int flip = random.Next(bytes.Count);
                    bytes[flip] ^= (byte)(1 << random.Next(8));
                    break;
                case 1 when bytes.Count > 0:
                    bytes[random.Next(bytes.Count)] = (byte)random.Next(256);
                    break;
                case 2:
                    bytes.InsertRange(random.Next(bytes.Count + 1), Bytes(random, random.Next(1, 9)));
                    break;
                case 3 when bytes.Count > 0:
                    int start = random.Next(bytes.Count);
                    bytes.RemoveRange(start, Math.Min(bytes.Count - start, random.Next(1, 9)));
                    break;
                case 4 when bytes.Count > 0:
                    int cut = random.Next(bytes.Count);
                    bytes.RemoveRange(cut, bytes.Count - cut);
                    break;
                case 5 when bytes.Count >= FrameHeader.Size:
                    // a new declared length: near the real one, or anything
                    int declared = random.Next(2) == 0
                        ? Math.Max(0, bytes.Count - FrameHeader.Size + random.Next(-3, 4))
                        : random.Next();
                    System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(System.Runtime.InteropServices.CollectionsMarshal.AsSpan(bytes), declared);
                    break;
                case 6 when bytes.Count >= FrameHeader.Size:
                    bytes[4] = (byte)random.Next(256);
                    break;
                default:
                    bytes.AddRange(Valid(random, (FrameType)random.Next(1, 10), (uint)random.Next(0, 4)));
                    break;
            }
        }

        return [.. bytes];
    }
}
