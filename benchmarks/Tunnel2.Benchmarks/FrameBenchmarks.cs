using System.Buffers;
using BenchmarkDotNet.Attributes;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.Benchmarks;

/// <summary>Encoding and decoding the frames of one small exchange: a request head, a response head and a data frame.</summary>
[MemoryDiagnoser]
public class FrameBenchmarks
{
    private const int MaxPayload = 256 * 1024;

    private readonly ArrayBufferWriter<byte> _output = new(64 * 1024);
    private RequestHead _requestHead = null!;
    private ResponseHead _responseHead = null!;
    private ReadOnlySequence<byte> _dataFrame;
    private ReadOnlySequence<byte> _requestHeadPayload;
    private ReadOnlySequence<byte> _responseHeadPayload;

    /// <summary>Body bytes per data frame: a small answer and a full 64 KiB chunk of a streamed body.</summary>
    [Params(16, 65536)]
    public int DataBytes { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _requestHead = new RequestHead("GET", "/loadtest/get?a=1&b=two", SampleHeaders.Request());
        _responseHead = new ResponseHead(200, SampleHeaders.Response());

        var writer = new ArrayBufferWriter<byte>();
        byte[] payload = ArrayPool<byte>.Shared.Rent(DataBytes);
        OutboundFrame.WithPooledPayload(FrameType.Data, FrameFlags.EndStream, 7, payload, DataBytes).WriteTo(writer);
        _dataFrame = new ReadOnlySequence<byte>(writer.WrittenMemory.ToArray());

        writer.Clear();
        HeadCodec.WriteRequestHead(writer, _requestHead);
        _requestHeadPayload = new ReadOnlySequence<byte>(writer.WrittenMemory.ToArray());
        writer.Clear();
        HeadCodec.WriteResponseHead(writer, _responseHead);
        _responseHeadPayload = new ReadOnlySequence<byte>(writer.WrittenMemory.ToArray());
    }

    [Benchmark]
    public int EncodeDataFrame()
    {
        _output.ResetWrittenCount();
        byte[] payload = ArrayPool<byte>.Shared.Rent(DataBytes);
        OutboundFrame.WithPooledPayload(FrameType.Data, FrameFlags.None, 7, payload, DataBytes).WriteTo(_output);
        return _output.WrittenCount;
    }

    [Benchmark]
    public long DecodeDataFrame()
    {
        ReadOnlySequence<byte> buffer = _dataFrame;
        FrameReader.TryReadFrame(ref buffer, MaxPayload, out FrameHeader header, out ReadOnlySequence<byte> payload);
        return header.StreamId + payload.Length;
    }

    [Benchmark]
    public int EncodeRequestHead()
    {
        _output.ResetWrittenCount();
        HeadCodec.WriteRequestHead(_output, _requestHead);
        return _output.WrittenCount;
    }

    [Benchmark]
    public int DecodeRequestHead() => HeadCodec.ReadRequestHead(_requestHeadPayload).Headers.Count;

    [Benchmark]
    public int EncodeResponseHead()
    {
        _output.ResetWrittenCount();
        HeadCodec.WriteResponseHead(_output, _responseHead);
        return _output.WrittenCount;
    }

    [Benchmark]
    public int DecodeResponseHead() => HeadCodec.ReadResponseHead(_responseHeadPayload).Headers.Count;
}
