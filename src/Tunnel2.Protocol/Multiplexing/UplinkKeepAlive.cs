namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The uplink's clock: on each tick it closes an uplink that has been silent past the keep-alive timeout, sends a Ping
/// when either direction has been quiet for an interval, and (server side) resets streams whose response head is
/// overdue, with one walk of the stream table instead of a timer per request.
/// </summary>
internal sealed class UplinkKeepAlive
{
    private static readonly TimeSpan ShortestTick = TimeSpan.FromMilliseconds(50);

    private readonly Uplink _uplink;
    private readonly UplinkStreamTable _streams;
    private readonly IUplinkWriter _writer;
    private readonly long _intervalMs;
    private readonly long _timeoutMs;
    private readonly long? _headTimeoutMs;
    private long _lastReceivedTicks = Environment.TickCount64;
    private ulong _sequence;

    public UplinkKeepAlive(Uplink uplink, UplinkStreamTable streams, IUplinkWriter writer)
    {
        _uplink = uplink;
        _streams = streams;
        _writer = writer;
        UplinkSettings settings = uplink.Settings;
        _intervalMs = (long)settings.KeepAliveInterval.TotalMilliseconds;
        _timeoutMs = (long)settings.KeepAliveTimeout.TotalMilliseconds;
        _headTimeoutMs = uplink.Role == UplinkRole.Server && settings.ResponseHeadTimeout is { } headTimeout ? (long)headTimeout.TotalMilliseconds : null;
        Tick = TickFor(settings, uplink.Role);
    }

    /// <summary>A quarter of the shortest deadline the clock watches, but no less than 50 ms.</summary>
    public TimeSpan Tick { get; }

    /// <summary>The reader got bytes from the peer.</summary>
    public void OnReceived() => Volatile.Write(ref _lastReceivedTicks, Environment.TickCount64);

    public async Task RunAsync(CancellationToken closed)
    {
        using var timer = new PeriodicTimer(Tick);
        try
        {
            while (await timer.WaitForNextTickAsync(closed).ConfigureAwait(false))
            {
                if (!OnTick(Environment.TickCount64))
                {
                    return;
                }
            }
        }
        catch (OperationCanceledException)
        {
            // The uplink closed.
        }
    }

    /// <returns>False once the uplink was closed for silence.</returns>
    private bool OnTick(long now)
    {
        long silentFor = now - Volatile.Read(ref _lastReceivedTicks);
        if (silentFor > _timeoutMs)
        {
            _uplink.Close($"nothing received for {silentFor} ms (keep-alive timeout)");
            return false;
        }

        if (_headTimeoutMs is { } headTimeoutMs)
        {
            _streams.ForEach(
                static (stream, state) =>
                {
                    if (stream.IsResponseHeadOverdue(state.Now, state.TimeoutMs))
                    {
                        stream.Reset(Frames.ProtocolErrorCode.ResponseHeadTimeout);
                    }
                },
                (Now: now, TimeoutMs: headTimeoutMs));
        }

        if (now - _writer.LastSentTicks >= _intervalMs || silentFor >= _intervalMs)
        {
            _uplink.TryEnqueue(OutboundFrame.Ping(++_sequence));
        }

        return true;
    }

    private static TimeSpan TickFor(UplinkSettings settings, UplinkRole role)
    {
        TimeSpan shortest = settings.KeepAliveInterval < settings.KeepAliveTimeout ? settings.KeepAliveInterval : settings.KeepAliveTimeout;
        if (role == UplinkRole.Server && settings.ResponseHeadTimeout is { } headTimeout && headTimeout < shortest)
        {
            shortest = headTimeout;
        }

        return TimeSpan.FromTicks(Math.Max(ShortestTick.Ticks, shortest.Ticks / 4));
    }
}
