using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Relay.Http1;

namespace Tunnel2.TunnelClient.Relay.Pipeline;

/// <summary>
/// One stream the server opened, on its way through the client's steps (admission, pick, lease, HTTP/1 exchange, body
/// pump or upgrade, retry): what each step found, for the next to read, and what the observer reads at the defined
/// points (<see cref="IExchangeObserver"/>). One object per stream in flight, taken from <see cref="RelayExchangePool"/>
/// and handed back when the stream ends, so the hot path does not allocate it.
/// </summary>
internal sealed class RelayExchange
{
    private ulong _tried;
    private IConcurrencySlots? _slot;

    public IHttpExchange Stream { get; private set; } = null!;

    /// <summary>What the backend is asked (with <c>--path-prefix keep</c>, the path as the caller sent it).</summary>
    public RequestHead Request { get; private set; } = null!;

    /// <summary>An upgrade request: it has no body, and its stream stays open for the bytes that follow a 101.</summary>
    public bool IsUpgrade { get; private set; }

    public bool IsHead { get; private set; }

    /// <summary>The request has a body to send (an upgrade request never has).</summary>
    public bool HasBody { get; private set; }

    /// <summary>The inspector's record of this exchange, when the inspector is on.</summary>
    public IExchangeObserver? Observer { get; private set; }

    /// <summary>The exchange holds a concurrency slot (given back once the response head is out, or at its end).</summary>
    public bool SlotHeld => _slot is not null;

    /// <summary>The request's affinity key, read once; null without affinity.</summary>
    public string? AffinityKey { get; set; }

    /// <summary>The backend the current attempt runs on.</summary>
    public Backend Backend { get; set; } = null!;

    /// <summary>The backends this request has failed on, a bit per <see cref="Backends.Backend.Index"/>.</summary>
    public ref ulong TriedBackends => ref _tried;

    /// <summary>Attempts made on <see cref="Backend"/> before the current one (0 again after a move to another backend).</summary>
    public int AttemptOnBackend { get; set; }

    /// <summary>The current attempt's connection, while it holds one.</summary>
    public BackendConnection? Connection { get; set; }

    /// <summary>The connection came from the pool's idle ones (it may have been closed by the backend meanwhile).</summary>
    public bool ConnectionReused { get; set; }

    /// <summary>Why the connection may not be reused; null after a clean end.</summary>
    public CloseCause? CloseCause { get; set; }

    /// <summary>The <c>Host</c> the backend was sent.</summary>
    public string? Host { get; set; }

    /// <summary>Sends the request body to the backend (or flushes the head of a bodiless request), full duplex with the response.</summary>
    public Task RequestBody { get; set; } = Task.CompletedTask;

    /// <summary>The backend's response head, once it came.</summary>
    public BackendResponseHead? Response { get; set; }

    /// <summary>Why the exchange failed, as the caller was told (a reset code), the metrics count it and the inspector shows it.</summary>
    public RelayFailure? Failure { get; set; }

    /// <summary>Why the exchange was cancelled (the stream reset, the uplink closed), when it was.</summary>
    public string? CancelDetail { get; set; }

    /// <summary>The admission step gave the exchange a concurrency slot, which goes back to <paramref name="slots"/>.</summary>
    public void HoldSlot(IConcurrencySlots slots) => _slot = slots;

    /// <summary>
    /// The response head went up: the concurrency slot goes back to the admission step now, since what follows (a long
    /// body, an SSE stream, a WebSocket) must hold none.
    /// </summary>
    public void ResponseHeadSent() => ReleaseSlot();

    /// <summary>Gives the exchange's slot back to the admission step that gave it, when it still holds one.</summary>
    public void ReleaseSlot()
    {
        if (_slot is { } slots)
        {
            _slot = null;
            slots.Release();
        }
    }

    public void Start(IHttpExchange stream, RequestHead request, IExchangeObserver? observer)
    {
        Stream = stream;
        Request = request;
        Observer = observer;
        IsUpgrade = request.IsUpgrade;
        IsHead = request.Method == "HEAD";
        HasBody = stream.RequestHasBody && !IsUpgrade;
    }

    /// <summary>Forgets the stream, so that a pooled exchange keeps nothing of it alive.</summary>
    public void Clear()
    {
        Stream = null!;
        Request = null!;
        Observer = null;
        Backend = null!;
        Connection = null;
        Response = null;
        RequestBody = Task.CompletedTask;
        AffinityKey = Host = CancelDetail = null;
        Failure = null;
        CloseCause = null;
        _tried = 0;
        _slot = null;
        AttemptOnBackend = 0;
        IsUpgrade = IsHead = HasBody = ConnectionReused = false;
    }
}
