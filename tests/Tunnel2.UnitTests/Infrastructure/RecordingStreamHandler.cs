using System.Threading.Channels;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>A client-side stream handler that hands every stream the server opens to the test, in order, whatever its role.</summary>
internal sealed class RecordingStreamHandler : IUplinkStreamHandler
{
    private readonly Channel<UplinkStream> _streams = Channel.CreateUnbounded<UplinkStream>();
    private readonly List<uint> _ids = [];
    private readonly List<string> _roles = [];

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

    /// <summary>The role each stream was handed over in, in order: "exchange" or "byte stream".</summary>
    public IReadOnlyList<string> Roles
    {
        get
        {
            lock (_ids)
            {
                return [.. _roles];
            }
        }
    }

    public void OnExchangeOpened(IHttpExchange exchange) => Record((UplinkStream)exchange, "exchange");

    public void OnByteStreamOpened(IByteStream stream) => Record((UplinkStream)stream, "byte stream");

    private void Record(UplinkStream stream, string role)
    {
        lock (_ids)
        {
            _ids.Add(stream.Id);
            _roles.Add(role);
        }

        OnOpened?.Invoke(stream);
        _streams.Writer.TryWrite(stream);
    }

    public Task<UplinkStream> NextAsync() => _streams.Reader.ReadAsync().WithTimeout();
}
