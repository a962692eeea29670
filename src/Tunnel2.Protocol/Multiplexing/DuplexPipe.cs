using System.IO.Pipelines;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>A reader and a writer over one connection, as an uplink's transport.</summary>
public sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
{
    public PipeReader Input { get; } = input;

    public PipeWriter Output { get; } = output;

    /// <summary>Pipes over a connection's stream, with the buffer sizes the uplink works best with.</summary>
    public static DuplexPipe Over(Stream stream) => new(
        PipeReader.Create(stream, new StreamPipeReaderOptions(bufferSize: 64 * 1024, minimumReadSize: 4096, leaveOpen: true)),
        PipeWriter.Create(stream, new StreamPipeWriterOptions(minimumBufferSize: 64 * 1024, leaveOpen: true)));
}
