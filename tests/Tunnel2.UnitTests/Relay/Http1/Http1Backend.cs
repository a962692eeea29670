using System.IO.Pipelines;
using System.Text;

namespace Tunnel2.UnitTests.Relay.Http1;

/// <summary>Plays the backend's side of an HTTP/1.1 connection: raw response bytes into a pipe, in chosen pieces.</summary>
internal static class Http1Backend
{
    public static byte[] Bytes(string raw) => Encoding.Latin1.GetBytes(raw);

    /// <summary>Writes the bytes in pieces of at most <paramref name="pieceSize"/>, flushing each; completes the pipe if asked.</summary>
    public static async Task WriteAsync(PipeWriter writer, byte[] bytes, int pieceSize = int.MaxValue, bool complete = false)
    {
        for (int offset = 0; offset < bytes.Length; offset += pieceSize)
        {
            await writer.WriteAsync(bytes.AsMemory(offset, Math.Min(pieceSize, bytes.Length - offset)));
        }

        if (complete)
        {
            await writer.CompleteAsync();
        }
    }

    /// <summary>A pipe already holding the bytes (and completed when asked).</summary>
    public static async Task<PipeReader> WithAsync(string raw, bool complete = false)
    {
        var pipe = new Pipe();
        await WriteAsync(pipe.Writer, Bytes(raw), complete: complete);
        return pipe.Reader;
    }

    /// <summary>Everything still unread in a pipe whose writer has completed.</summary>
    public static string Rest(PipeReader reader)
    {
        Assert.True(reader.TryRead(out ReadResult result));
        Assert.True(result.IsCompleted);
        string rest = Encoding.Latin1.GetString(result.Buffer);
        reader.AdvanceTo(result.Buffer.End);
        return rest;
    }
}
