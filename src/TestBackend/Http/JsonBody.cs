using System.Buffers;
using System.IO.Pipelines;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace Tunnel2.TestBackend.Http;

/// <summary>
/// Writes JSON with <see cref="Utf8JsonWriter"/> (no reflection serializer) into a per-thread buffer,
/// so the response gets an exact Content-Length, then copies it into the response pipe.
/// </summary>
internal static class JsonBody
{
    // Relaxed escaping keeps '+', '&' and non-ASCII readable for people using curl; the output is
    // never embedded in HTML.
    public static readonly JsonWriterOptions WriterOptions = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    // A buffer that grew past this (a request with huge headers) is dropped instead of kept per thread.
    private const int RetainedCapacity = 64 * 1024;

    [ThreadStatic]
    private static ArrayBufferWriter<byte>? t_buffer;

    [ThreadStatic]
    private static Utf8JsonWriter? t_writer;

    /// <summary>
    /// Sets Content-Type and Content-Length, writes the body produced by <paramref name="write"/> and flushes.
    /// <paramref name="write"/> runs synchronously, which is what makes the per-thread buffer safe.
    /// </summary>
    public static Task WriteAsync<TState>(
        HttpResponse response, string contentType, TState state, Action<Utf8JsonWriter, TState> write)
    {
        var buffer = t_buffer ??= new ArrayBufferWriter<byte>(1024);
        var writer = t_writer ??= new Utf8JsonWriter(buffer, WriterOptions);
        writer.Reset(buffer);
        try
        {
            write(writer, state);
#pragma warning disable CA1849 // the writer writes into an in-memory ArrayBufferWriter: Flush copies bytes, it waits on no I/O
            writer.Flush();
#pragma warning restore CA1849
            response.ContentType = contentType;
            response.ContentLength = buffer.WrittenCount;
            response.BodyWriter.Write(buffer.WrittenSpan);
        }
        finally
        {
            if (buffer.Capacity > RetainedCapacity)
            {
                t_buffer = null;
                t_writer = null;
            }
            else
            {
                buffer.ResetWrittenCount();
                writer.Reset(buffer);
            }
        }

        return AsTask(response.BodyWriter.FlushAsync(response.HttpContext.RequestAborted));
    }

    /// <summary>Serializes once, for bodies computed at start-up.</summary>
    public static byte[] SerializeOnce(Action<Utf8JsonWriter> write)
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        using (var writer = new Utf8JsonWriter(buffer, WriterOptions))
        {
            write(writer);
        }

        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>Avoids allocating a Task when the flush completed synchronously, the common case.</summary>
    public static Task AsTask(ValueTask<FlushResult> flush) =>
        flush.IsCompletedSuccessfully ? Task.CompletedTask : flush.AsTask();
}
