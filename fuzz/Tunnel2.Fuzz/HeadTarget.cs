using System.Buffers;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Http1;

namespace Tunnel2.Fuzz;

/// <summary>
/// The head codec of Tunnel2.Protocol. The first byte picks the parser: the binary request head, the binary response
/// head (each accepted head must encode and decode back to itself), or the HTTP/1 head parser, which must give the same
/// answer whether the bytes come in one segment or in many. The only failures expected are the parsers' own
/// exceptions; anything else escapes and AFL++ records it as a crash.
/// </summary>
internal static class HeadTarget
{
    private const int MaxHeadBytes = 64 * 1024;

    public static void Run(byte[] input)
    {
        if (input.Length == 0)
        {
            return;
        }

        byte[] payload = input[1..];
        switch (input[0] % 3)
        {
            case 0:
                RequestRoundTrip(payload);
                break;
            case 1:
                ResponseRoundTrip(payload);
                break;
            default:
                Http1Split(payload, segmentSize: 1 + (input[0] / 3 % 16));
                break;
        }
    }

    private static void RequestRoundTrip(byte[] payload)
    {
        RequestHead head;
        try
        {
            head = HeadCodec.ReadRequestHead(new ReadOnlySequence<byte>(payload));
        }
        catch (ProtocolViolationException)
        {
            return;
        }

        var writer = new ArrayBufferWriter<byte>();
        HeadCodec.WriteRequestHead(writer, head);
        RequestHead again = HeadCodec.ReadRequestHead(new ReadOnlySequence<byte>(writer.WrittenMemory));
        Check.That(again.Method == head.Method && again.Target == head.Target && again.Headers.SequenceEqual(head.Headers),
            "a request head read back differs from the one written");
    }

    private static void ResponseRoundTrip(byte[] payload)
    {
        ResponseHead head;
        try
        {
            head = HeadCodec.ReadResponseHead(new ReadOnlySequence<byte>(payload));
        }
        catch (ProtocolViolationException)
        {
            return;
        }

        var writer = new ArrayBufferWriter<byte>();
        HeadCodec.WriteResponseHead(writer, head);
        ResponseHead again = HeadCodec.ReadResponseHead(new ReadOnlySequence<byte>(writer.WrittenMemory));
        Check.That(again.StatusCode == head.StatusCode && again.Headers.SequenceEqual(head.Headers),
            "a response head read back differs from the one written");
    }

    private static void Http1Split(byte[] payload, int segmentSize)
    {
        string whole = ParseHttp1(new ReadOnlySequence<byte>(payload));
        string split = ParseHttp1(Segments.Of(payload, segmentSize));
        Check.That(whole == split, $"one segment gave '{whole}', segments of {segmentSize} gave '{split}'");
    }

    /// <summary>A description of what the parser made of the bytes, to compare two runs.</summary>
    private static string ParseHttp1(ReadOnlySequence<byte> buffer)
    {
        long length = buffer.Length;
        try
        {
            if (!Http1Head.TryRead(ref buffer, MaxHeadBytes, out Http1Head? head))
            {
                Check.That(buffer.Length == length, "an incomplete head consumed bytes");
                return "incomplete";
            }

            foreach (HeaderField field in head.Fields)
            {
                Check.FieldIsClean(field);
            }

            return $"{head.StartLine}|{string.Join('|', head.Fields)}|rest={buffer.Length}";
        }
        catch (InvalidDataException)
        {
            return "invalid";
        }
        catch (Http1HeadTooLargeException)
        {
            return "too-large";
        }
    }
}
