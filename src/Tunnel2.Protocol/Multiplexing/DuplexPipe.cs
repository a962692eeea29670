using System.IO.Pipelines;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>A reader and a writer over one connection, as an uplink's transport.</summary>
public sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
{
    public PipeReader Input { get; } = input;

    public PipeWriter Output { get; } = output;

    /// <summary>
    /// The connection under <see cref="Output"/>, when the uplink's writer may send a large Data payload straight to it
    /// (after flushing what <see cref="Output"/> holds) instead of copying it into <see cref="Output"/> first. Set by
    /// <see cref="Over"/>.
    /// </summary>
    public Stream? Connection { get; init; }

    /// <summary>Pipes over a connection's stream, with the buffer sizes the uplink works best with.</summary>
    /// <param name="stream">The connection.</param>
    /// <param name="zeroByteReads">
    /// Wait for data with a zero-byte read before renting the 64 KiB read buffer, so that an idle connection holds no
    /// buffer while its read is pending (the server, with one uplink per client, sets it; see
    /// docs/benchmarks/2026-11-23-idle-sessions.md). The stream must treat a zero-byte read as "wait until data is
    /// available" (sockets and Kestrel's request and upgrade streams do); a stream that returns at once only loses the
    /// saving, never data.
    /// </param>
    public static DuplexPipe Over(Stream stream, bool zeroByteReads = false) => new(
        PipeReader.Create(stream, new StreamPipeReaderOptions(bufferSize: 64 * 1024, minimumReadSize: 4096, leaveOpen: true, useZeroByteReads: zeroByteReads)),
        PipeWriter.Create(stream, new StreamPipeWriterOptions(minimumBufferSize: 64 * 1024, leaveOpen: true)))
    {
        Connection = stream,
    };
}
