using System.Buffers;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.Fuzz;

/// <summary>A broken invariant: thrown so that AFL++ records the input as a crash.</summary>
internal sealed class InvariantBrokenException(string message) : Exception(message);

internal static class Check
{
    private static readonly SearchValues<char> NotInNames = SearchValues.Create("\r\n\0: \t");
    private static readonly SearchValues<char> NotInValues = SearchValues.Create("\r\n\0");

    public static void That(bool condition, string broken)
    {
        if (!condition)
        {
            throw new InvariantBrokenException(broken);
        }
    }

    /// <summary>A parsed field that could split or end a head when written out again.</summary>
    public static void FieldIsClean(HeaderField field)
    {
        That(field.Name.Length > 0, "an empty field name");
        That(field.Name.AsSpan().IndexOfAny(NotInNames) < 0, $"a field name with a separator or control: '{field.Name}'");
        That(field.Value.AsSpan().IndexOfAny(NotInValues) < 0, $"a field value with CR, LF or NUL: '{field.Value}'");
        That(field.Value.Length == field.Value.Trim(' ', '\t').Length, $"a field value with surrounding white space: '{field.Value}'");
    }
}

/// <summary>Splits bytes into a sequence of many segments, as a socket's reads would.</summary>
internal sealed class Segments : ReadOnlySequenceSegment<byte>
{
    private Segments(ReadOnlyMemory<byte> memory, long runningIndex)
    {
        Memory = memory;
        RunningIndex = runningIndex;
    }

    public static ReadOnlySequence<byte> Of(byte[] bytes, int size)
    {
        if (bytes.Length <= size)
        {
            return new ReadOnlySequence<byte>(bytes);
        }

        var first = new Segments(bytes.AsMemory(0, size), 0);
        Segments last = first;
        for (int offset = size; offset < bytes.Length; offset += size)
        {
            var next = new Segments(bytes.AsMemory(offset, Math.Min(size, bytes.Length - offset)), offset);
            last.Next = next;
            last = next;
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }
}
