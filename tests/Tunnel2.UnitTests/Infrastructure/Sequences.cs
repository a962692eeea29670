using System.Buffers;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>One piece of a hand-built multi-segment <see cref="ReadOnlySequence{T}"/>.</summary>
internal sealed class BufferSegment : ReadOnlySequenceSegment<byte>
{
    public BufferSegment(ReadOnlyMemory<byte> memory) => Memory = memory;

    public BufferSegment Append(ReadOnlyMemory<byte> memory)
    {
        var next = new BufferSegment(memory) { RunningIndex = RunningIndex + Memory.Length };
        Next = next;
        return next;
    }
}

/// <summary>Builds sequences whose bytes are spread over several separately allocated segments.</summary>
internal static class Sequences
{
    /// <summary>The bytes cut at the given offsets (ascending, may repeat to make empty segments); each piece is a copy.</summary>
    public static ReadOnlySequence<byte> SplitAt(byte[] data, params int[] cuts)
    {
        var pieces = new List<byte[]>(cuts.Length + 1);
        int start = 0;
        foreach (int cut in cuts)
        {
            pieces.Add(data[start..cut]);
            start = cut;
        }

        pieces.Add(data[start..]);
        return FromSegments(pieces);
    }

    /// <summary>The bytes in segments of at most <paramref name="segmentSize"/> bytes.</summary>
    public static ReadOnlySequence<byte> Chunked(byte[] data, int segmentSize)
    {
        var pieces = new List<byte[]>();
        for (int i = 0; i < data.Length; i += segmentSize)
        {
            pieces.Add(data[i..Math.Min(data.Length, i + segmentSize)]);
        }

        return FromSegments(pieces);
    }

    /// <summary>The bytes cut at random places into segments of 0 to <paramref name="maxSegment"/> bytes.</summary>
    public static ReadOnlySequence<byte> RandomlySplit(byte[] data, Random random, int maxSegment)
    {
        var pieces = new List<byte[]>();
        int start = 0;
        while (start < data.Length)
        {
            int size = Math.Min(data.Length - start, random.Next(0, maxSegment + 1));
            pieces.Add(data[start..(start + size)]);
            start += size;
        }

        return FromSegments(pieces);
    }

    public static ReadOnlySequence<byte> FromSegments(IReadOnlyList<byte[]> pieces)
    {
        if (pieces.Count == 0)
        {
            return ReadOnlySequence<byte>.Empty;
        }

        var first = new BufferSegment(pieces[0]);
        BufferSegment last = first;
        for (int i = 1; i < pieces.Count; i++)
        {
            last = last.Append(pieces[i]);
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }
}
