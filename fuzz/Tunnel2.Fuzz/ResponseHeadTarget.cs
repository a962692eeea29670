using System.IO.Pipelines;
using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Relay.Http1;

namespace Tunnel2.Fuzz;

/// <summary>
/// The client's reader of its backend's response head. The first byte says whether the request was a HEAD and whether
/// it asked for an upgrade; the rest is what the backend sent, written to a pipe in pieces whose size the first byte
/// also sets. The reader may say the head is malformed (<see cref="InvalidDataException"/>) or that the connection
/// ended inside it (<see cref="IOException"/>); any other exception is a crash, and so is a head that breaks the
/// invariants the body pump relies on.
/// </summary>
internal static class ResponseHeadTarget
{
    public static void Run(byte[] input)
    {
        if (input.Length == 0)
        {
            return;
        }

        bool isHead = (input[0] & 1) != 0;
        bool upgrade = (input[0] & 2) != 0;
        int piece = 1 + (input[0] >> 2);
        var pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 0, useSynchronizationContext: false));
        Task writing = WriteAsync(pipe.Writer, input.AsMemory(1), piece);
        BackendResponseHead? head;
        try
        {
            head = ResponseHeadReader.ReadAsync(pipe.Reader, readAhead: null, isHead, upgrade, CancellationToken.None).AsTask().GetAwaiter().GetResult();
        }
        catch (Exception ex) when (ex is InvalidDataException or IOException)
        {
            return;
        }
        finally
        {
            writing.GetAwaiter().GetResult();
        }

        if (head is null)
        {
            Check.That(input.Length == 1, "no head was read from a non-empty answer");
            return;
        }

        Check.That(head.StatusCode is >= 100 and <= 999, $"status {head.StatusCode}");
        Check.That(head.StatusCode is not (>= 100 and < 200) || (head.StatusCode == 101 && upgrade), $"an interim {head.StatusCode} became the answer");
        Check.That(head.Framing != BodyFraming.ContentLength || head.ContentLength > 0, "Content-Length framing without a length");
        Check.That(head.Framing != BodyFraming.UntilClose || !head.KeepAlive, "a body read until close on a kept connection");
        Check.That(!isHead || head.Framing == BodyFraming.None, "the answer to HEAD has a body");
        int lengths = 0;
        foreach (HeaderField field in head.Headers)
        {
            Check.FieldIsClean(field);
            Check.That(!field.Name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase), "Transfer-Encoding passed on");
            lengths += field.Name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase) ? 1 : 0;
        }

        Check.That(lengths <= 1, "more than one Content-Length passed on");
    }

    private static async Task WriteAsync(PipeWriter writer, ReadOnlyMemory<byte> bytes, int piece)
    {
        for (int offset = 0; offset < bytes.Length; offset += piece)
        {
            await writer.WriteAsync(bytes.Slice(offset, Math.Min(piece, bytes.Length - offset)));
        }

        await writer.CompleteAsync();
    }
}
