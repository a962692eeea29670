using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>Writes a request head and streams its body to the backend in HTTP/1.1 framing.</summary>
internal static class RequestWriter
{
    private static ReadOnlySpan<byte> CrLf => "\r\n"u8;

    /// <summary>Writes the request line and headers; returns true when the body must go chunked (no Content-Length).</summary>
    public static bool WriteHead(PipeWriter output, RequestHead head, string host, bool hasBody)
    {
        WriteText(output, head.Method);
        output.Write(" "u8);
        WriteText(output, head.Target);
        output.Write(" HTTP/1.1\r\nHost: "u8);
        WriteText(output, host);
        output.Write(CrLf);
        bool hasLength = false;
        foreach (HeaderField field in head.Headers)
        {
            if (field.Name.Equals("Host", StringComparison.OrdinalIgnoreCase)
                || field.Name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase))
            {
                continue;
            }

            hasLength |= field.Name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase);
            WriteText(output, field.Name);
            output.Write(": "u8);
            WriteText(output, field.Value);
            output.Write(CrLf);
        }

        bool chunked = hasBody && !hasLength;
        if (chunked)
        {
            output.Write("Transfer-Encoding: chunked\r\n"u8);
        }

        output.Write(CrLf);
        return chunked;
    }

    /// <summary>Copies the body arriving on the stream to the backend, granting the stream's window as it goes.</summary>
    public static async Task WriteBodyAsync(UplinkStream stream, PipeWriter output, bool chunked, CancellationToken cancellationToken)
    {
        PipeReader input = stream.Input;
        while (true)
        {
            ReadResult result = await input.ReadAsync(cancellationToken);
            System.Buffers.ReadOnlySequence<byte> buffer = result.Buffer;
            long length = buffer.Length;
            if (length > 0)
            {
                if (chunked)
                {
                    WriteText(output, length.ToString("X", System.Globalization.CultureInfo.InvariantCulture));
                    output.Write(CrLf);
                }

                foreach (ReadOnlyMemory<byte> segment in buffer)
                {
                    output.Write(segment.Span);
                }

                if (chunked)
                {
                    output.Write(CrLf);
                }
            }

            input.AdvanceTo(buffer.End);
            stream.OnInputConsumed(length);
            if (result.IsCompleted)
            {
                if (chunked)
                {
                    output.Write("0\r\n\r\n"u8);
                }

                await output.FlushAsync(cancellationToken);
                return;
            }

            FlushResult flush = await output.FlushAsync(cancellationToken);
            if (flush.IsCompleted || flush.IsCanceled)
            {
                throw new IOException("The backend stopped reading the request body.");
            }
        }
    }

    private static void WriteText(PipeWriter output, string text)
    {
        Span<byte> span = output.GetSpan(Encoding.UTF8.GetMaxByteCount(text.Length));
        output.Advance(Encoding.UTF8.GetBytes(text, span));
    }
}
