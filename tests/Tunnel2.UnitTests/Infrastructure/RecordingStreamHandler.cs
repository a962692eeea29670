using System.Threading.Channels;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>A client-side stream handler that hands every stream the server opens to the test, in order.</summary>
internal sealed class RecordingStreamHandler : IUplinkStreamHandler
{
    private readonly Channel<UplinkStream> _streams = Channel.CreateUnbounded<UplinkStream>();
    private readonly List<uint> _ids = [];

    /// <summary>Runs on the uplink's reader loop for every stream, before the test sees it.</summary>
    public Action<UplinkStream>? OnOpened { get; init; }

    public IReadOnlyList<uint> Ids
    {
        get
        {
            lock (_ids)
            {
                return [.. _ids];
            }
        }
    }

    public void OnStreamOpened(UplinkStream stream)
    {
        lock (_ids)
        {
            _ids.Add(stream.Id);
        }

        OnOpened?.Invoke(stream);
        _streams.Writer.TryWrite(stream);
    }

    public Task<UplinkStream> NextAsync() => _streams.Reader.ReadAsync().WithTimeout();
}
