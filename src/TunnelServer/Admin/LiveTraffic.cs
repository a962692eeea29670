using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Tunnel2.ProxyEntry.Diagnostics;

namespace Tunnel2.TunnelServer.Admin;

/// <summary>
/// What the dashboard draws: per session, requests, 5xx answers and a latency histogram for each of the last
/// <see cref="WindowSeconds"/> seconds. It listens to <c>tunnel2.proxy.request.duration</c> like any exporter (a
/// <see cref="MeterListener"/>), so the request path records nothing extra; it exists only with an admin listener.
/// Sessions are the histogram's bounded labels (the first 100 by id, then <c>_other</c>).
/// </summary>
public sealed class LiveTraffic : IDisposable
{
    public const int WindowSeconds = 300;

    /// <summary>Latency buckets: upper bounds growing by about 19 % from 0.1 ms, the last open-ended (past 10 s).</summary>
    private static readonly double[] BucketBounds = BuildBounds();

    private readonly MeterListener _listener = new();
    // One lock per session (its ring), so requests of different sessions never wait on each other; the sessions are the
    // histogram's bounded labels, so this holds at most MetricsSessionLimit + 2 rings (about 117 KiB each).
    private readonly ConcurrentDictionary<string, SessionSeconds> _sessions = new(StringComparer.Ordinal);
    private readonly TimeProvider _clock;

    /// <param name="meterFactory">This host's factory: only its own ProxyEntry's instrument is heard (tests run several hosts in one process).</param>
    public LiveTraffic(IMeterFactory meterFactory, TimeProvider? clock = null)
    {
        _clock = clock ?? TimeProvider.System;
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Scope == meterFactory && instrument.Meter.Name == ProxyEntryMetrics.MeterName
                && instrument.Name == ProxyEntryMetrics.RequestDurationName)
            {
                listener.EnableMeasurementEvents(instrument, this);
            }
        };
        _listener.SetMeasurementEventCallback<double>(static (_, seconds, tags, state) => ((LiveTraffic)state!).OnRequest(seconds, tags));
        _listener.Start();
    }

    /// <summary>One session over the seconds asked of <see cref="Snapshot"/>: rate, 5xx answers, p50 and p99 in milliseconds.</summary>
    public readonly record struct SessionTraffic(string Session, double RequestsPerSecond, long Requests, long ServerErrors, double P50Ms, double P99Ms);

    public List<SessionTraffic> Snapshot(int seconds)
    {
        seconds = Math.Clamp(seconds, 1, WindowSeconds);
        long now = CurrentSecond();
        var result = new List<SessionTraffic>();
        var merged = new long[BucketBounds.Length];
        foreach (KeyValuePair<string, SessionSeconds> entry in _sessions)
        {
            Array.Clear(merged);
            long requests, errors;
            lock (entry.Value)
            {
                (requests, errors) = entry.Value.Sum(now, seconds, merged);
            }

            if (requests > 0)
            {
                result.Add(new SessionTraffic(entry.Key, (double)requests / seconds, requests, errors,
                    Percentile(merged, requests, 0.50), Percentile(merged, requests, 0.99)));
            }
        }

        result.Sort(static (a, b) => b.Requests.CompareTo(a.Requests));
        return result;
    }

    /// <summary>Requests per second of every session, second by second, oldest first (the dashboard's chart).</summary>
    public Dictionary<string, long[]> Timeline(int seconds)
    {
        seconds = Math.Clamp(seconds, 1, WindowSeconds);
        long now = CurrentSecond();
        var timeline = new Dictionary<string, long[]>(StringComparer.Ordinal);
        foreach (KeyValuePair<string, SessionSeconds> entry in _sessions)
        {
            lock (entry.Value)
            {
                timeline[entry.Key] = entry.Value.Counts(now, seconds);
            }
        }

        return timeline;
    }

    public void Dispose() => _listener.Dispose();

    private void OnRequest(double seconds, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        string session = SessionLabels.Unknown;
        int status = 0;
        foreach (KeyValuePair<string, object?> tag in tags)
        {
            if (tag.Key == ProxyEntryMetrics.SessionTag && tag.Value is string label)
            {
                session = label;
            }
            else if (tag.Key == ProxyEntryMetrics.StatusTag && tag.Value is int code)
            {
                status = code;
            }
        }

        int bucket = Array.BinarySearch(BucketBounds, seconds * 1000);
        bucket = bucket >= 0 ? bucket : Math.Min(~bucket, BucketBounds.Length - 1);
        long second = CurrentSecond();
        SessionSeconds window = _sessions.GetOrAdd(session, static _ => new SessionSeconds(BucketBounds.Length));
        lock (window)
        {
            window.Add(second, bucket, status >= 500);
        }
    }

    private long CurrentSecond() => (long)_clock.GetElapsedTime(0).TotalSeconds;

    private static double Percentile(long[] buckets, long total, double quantile)
    {
        long rank = (long)Math.Ceiling(total * quantile);
        long seen = 0;
        for (int i = 0; i < buckets.Length; i++)
        {
            seen += buckets[i];
            if (seen >= rank)
            {
                return Math.Round(BucketBounds[i], 2); // the bucket's upper bound: at most 19 % above the true value
            }
        }

        return BucketBounds[^1];
    }

    private static double[] BuildBounds()
    {
        var bounds = new List<double>();
        for (double bound = 0.1; bound < 10_000; bound *= 1.19)
        {
            bounds.Add(bound);
        }

        bounds.Add(double.MaxValue);
        return [.. bounds];
    }

    /// <summary>A ring of one-second slots; a slot is reused once its second has left the window.</summary>
    private sealed class SessionSeconds(int buckets)
    {
        private readonly long[] _second = new long[WindowSeconds];
        private readonly long[] _requests = new long[WindowSeconds];
        private readonly long[] _errors = new long[WindowSeconds];
        private readonly long[,] _latency = new long[WindowSeconds, buckets];

        public void Add(long second, int bucket, bool serverError)
        {
            int slot = Slot(second);
            if (_second[slot] != second)
            {
                _second[slot] = second;
                _requests[slot] = 0;
                _errors[slot] = 0;
                for (int i = 0; i < _latency.GetLength(1); i++)
                {
                    _latency[slot, i] = 0;
                }
            }

            _requests[slot]++;
            _errors[slot] += serverError ? 1 : 0;
            _latency[slot, bucket]++;
        }

        public (long Requests, long Errors) Sum(long now, int seconds, long[] latency)
        {
            long requests = 0, errors = 0;
            for (long second = now - seconds + 1; second <= now; second++)
            {
                int slot = Slot(second);
                if (_second[slot] != second)
                {
                    continue;
                }

                requests += _requests[slot];
                errors += _errors[slot];
                for (int i = 0; i < latency.Length; i++)
                {
                    latency[i] += _latency[slot, i];
                }
            }

            return (requests, errors);
        }

        public long[] Counts(long now, int seconds)
        {
            var counts = new long[seconds];
            for (int i = 0; i < seconds; i++)
            {
                long second = now - seconds + 1 + i;
                int slot = Slot(second);
                counts[i] = _second[slot] == second ? _requests[slot] : 0;
            }

            return counts;
        }

        private static int Slot(long second) => (int)(((second % WindowSeconds) + WindowSeconds) % WindowSeconds);
    }
}
