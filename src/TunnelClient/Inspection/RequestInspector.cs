using System.Threading.Channels;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.TunnelClient.Inspection;

/// <summary>
/// The request inspector's memory (<c>--inspect-url</c>): the last <see cref="Capacity"/> exchanges in a ring, each with
/// at most <see cref="BodyLimit"/> bytes of either body, so it holds at most Capacity × 2 × BodyLimit bytes of bodies
/// (25 MiB by default) besides the heads. It exists only when the inspector is on; the relay's cost when it is off is
/// a null check. Watchers of the live page get each new exchange through a bounded channel of their own.
/// </summary>
public sealed class RequestInspector
{
    private const int WatcherBacklog = 1000;

    private readonly Lock _lock = new();
    private readonly InspectedExchange?[] _ring;
    private readonly List<Channel<InspectorEvent>> _watchers = [];
    private int _next;
    private long _lastId;

    public RequestInspector(IOptions<TunnelClientOptions> options, TimeProvider time)
    {
        TunnelClientOptions settings = options.Value;
        Capacity = settings.Inspector.Capacity;
        BodyLimit = settings.Inspector.BodyLimit;
        RevealSecrets = settings.Inspector.RevealSecrets;
        Time = time;
        _ring = new InspectedExchange?[Capacity];
    }

    public int Capacity { get; }

    public int BodyLimit { get; }

    public bool RevealSecrets { get; }

    internal TimeProvider Time { get; }

    /// <summary>Starts recording one exchange; the header list is copied, since the relay adds to it on its way.</summary>
    public ExchangeCapture Begin(RequestHead request) => Begin(request.Method, request.Target, [.. request.Headers], replayOf: null);

    public ExchangeCapture Begin(string method, string target, List<HeaderField> headers, long? replayOf) => new(this, method, target, headers, replayOf);

    /// <summary>The exchanges kept, newest first.</summary>
    public List<InspectedExchange> Snapshot()
    {
        lock (_lock)
        {
            var exchanges = new List<InspectedExchange>(Capacity);
            for (int i = 1; i <= _ring.Length; i++)
            {
                if (_ring[(_next - i + _ring.Length) % _ring.Length] is { } exchange)
                {
                    exchanges.Add(exchange);
                }
            }

            return exchanges;
        }
    }

    public InspectedExchange? Find(long id)
    {
        lock (_lock)
        {
            foreach (InspectedExchange? exchange in _ring)
            {
                if (exchange?.Id == id)
                {
                    return exchange;
                }
            }

            return null;
        }
    }

    public void Clear()
    {
        lock (_lock)
        {
            Array.Clear(_ring);
            _next = 0;
            Broadcast(InspectorEvent.Cleared);
        }
    }

    /// <summary>A feed of what is recorded from now on, until <paramref name="stop"/> is cancelled.</summary>
    public ChannelReader<InspectorEvent> Watch(CancellationToken stop)
    {
        var channel = Channel.CreateBounded<InspectorEvent>(new BoundedChannelOptions(WatcherBacklog)
        {
            FullMode = BoundedChannelFullMode.DropOldest,
            SingleReader = true,
        });
        lock (_lock)
        {
            _watchers.Add(channel);
        }

        stop.Register(() =>
        {
            lock (_lock)
            {
                _watchers.Remove(channel);
            }

            channel.Writer.TryComplete();
        });
        return channel.Reader;
    }

    internal InspectedExchange Add(Func<long, InspectedExchange> create)
    {
        lock (_lock)
        {
            InspectedExchange exchange = create(++_lastId);
            _ring[_next] = exchange;
            _next = (_next + 1) % _ring.Length;
            Broadcast(new InspectorEvent(exchange));
            return exchange;
        }
    }

    private void Broadcast(InspectorEvent inspectorEvent)
    {
        foreach (Channel<InspectorEvent> watcher in _watchers)
        {
            watcher.Writer.TryWrite(inspectorEvent);
        }
    }
}

/// <summary>What a watcher of the live page is told: a new exchange, or (with none) that the list was cleared.</summary>
public sealed record InspectorEvent(InspectedExchange? Exchange)
{
    public static readonly InspectorEvent Cleared = new((InspectedExchange?)null);
}
