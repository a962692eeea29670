using System.Diagnostics;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Relay.Pipeline;

namespace Tunnel2.TunnelClient.Inspection;

/// <summary>
/// One exchange while it runs: a replay tells it what happens, the relay lets it observe its exchange
/// (<see cref="IExchangeObserver"/>), and <see cref="Complete"/> hands the finished record to the inspector once,
/// whichever path ends the exchange first.
/// </summary>
public sealed class ExchangeCapture : IExchangeObserver
{
    private readonly RequestInspector _inspector;
    private readonly long _started;
    private readonly DateTimeOffset _startedAt;
    private readonly string _method;
    private readonly string _target;
    private readonly List<HeaderField> _requestHeaders;
    private readonly long? _replayOf;
    private long _responseAt;
    private int? _status;
    private List<HeaderField>? _responseHeaders;
    private string? _backend;
    private string? _error;
    private InspectionOutcome? _outcome;
    private int _completed;

    internal ExchangeCapture(RequestInspector inspector, string method, string target, List<HeaderField> requestHeaders, long? replayOf)
    {
        _inspector = inspector;
        _started = Stopwatch.GetTimestamp();
        _startedAt = inspector.Time.GetUtcNow();
        _method = method;
        _target = target;
        _requestHeaders = requestHeaders;
        _replayOf = replayOf;
        RequestBody = new BodyCapture(inspector.BodyLimit);
        ResponseBody = new BodyCapture(inspector.BodyLimit);
    }

    public BodyCapture RequestBody { get; }

    public BodyCapture ResponseBody { get; }

    IBodyTap IExchangeObserver.RequestBodyTap => RequestBody;

    IBodyTap IExchangeObserver.ResponseBodyTap => ResponseBody;

    /// <param name="headers">The response's fields as they go back; the list is kept, not copied, and must not change afterwards.</param>
    public void OnResponseHead(int status, List<HeaderField> headers)
    {
        _responseAt = Stopwatch.GetTimestamp();
        _status = status;
        _responseHeaders = headers;
    }

    public void SetBackend(string backend) => _backend = backend;

    /// <summary>
    /// The <c>Host</c> the backend was sent (the relay writes it apart from the head's fields), kept first among the
    /// request's headers, as a browser's developer tools show it; a retry on another backend replaces it.
    /// </summary>
    public void SetHost(string host)
    {
        if (_requestHeaders.Count > 0 && _requestHeaders[0].Name == "Host")
        {
            _requestHeaders[0] = new HeaderField("Host", host);
        }
        else
        {
            _requestHeaders.Insert(0, new HeaderField("Host", host));
        }
    }

    /// <summary>The exchange failed; the first reason given is kept.</summary>
    public void Fail(string error)
    {
        _error ??= error;
        _outcome ??= InspectionOutcome.Failed;
    }

    public void Cancel(string detail)
    {
        _error ??= detail;
        _outcome ??= InspectionOutcome.Cancelled;
    }

    /// <summary>Records the exchange (the first call only) and returns the record; null on later calls.</summary>
    public InspectedExchange? Complete()
    {
        if (Interlocked.Exchange(ref _completed, 1) != 0)
        {
            return null;
        }

        InspectionOutcome outcome = _outcome ?? (_status == StatusCodes.Status101SwitchingProtocols ? InspectionOutcome.Upgraded : InspectionOutcome.Completed);
        TimeSpan? wait = _responseAt == 0 ? null : Stopwatch.GetElapsedTime(_started, _responseAt);
        return _inspector.Add(id => new InspectedExchange(id, _replayOf, _startedAt, wait, Stopwatch.GetElapsedTime(_started), _backend, outcome, _error,
            _method, _target, _requestHeaders, RequestBody.Freeze(), _status, _responseHeaders, ResponseBody.Freeze()));
    }

    void IExchangeObserver.OnResponseHead(RelayExchange exchange)
    {
        SetHost(exchange.Host!);
        SetBackend(exchange.Backend.ToString());
        OnResponseHead(exchange.Response!.StatusCode, exchange.Response.Headers);
    }

    void IExchangeObserver.OnUpgraded(RelayExchange exchange) => Complete();

    /// <summary>What the relay recorded on the exchange, in the order it happened: the first failure or cancellation wins.</summary>
    void IExchangeObserver.OnEnded(RelayExchange exchange)
    {
        if (Volatile.Read(ref _completed) != 0)
        {
            return; // an upgrade, shown when it switched
        }

        if (exchange.Host is not null)
        {
            SetHost(exchange.Host);
        }

        if (exchange.Backend is not null)
        {
            SetBackend(exchange.Backend.ToString());
        }

        if (exchange.Failure is { } failure)
        {
            Fail($"{failure.Reason}: {failure.Detail}");
        }

        if (exchange.CancelDetail is not null)
        {
            Cancel(exchange.CancelDetail);
        }

        if (exchange.Stream.IsAborted)
        {
            Cancel("the stream was reset (the caller went away, or the uplink closed)");
        }

        Complete();
    }
}
