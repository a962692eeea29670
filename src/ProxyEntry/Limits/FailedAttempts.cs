using System.Collections.Concurrent;
using System.Net;

namespace Tunnel2.ProxyEntry.Limits;

/// <summary>
/// Failed attempts per source address (wrong tokens on the tunnel port, wrong visitor credentials on the public port):
/// a bucket of <c>perMinute</c> counts that refills continuously at <c>perMinute</c> a minute. While an address has
/// less than one whole count left it is blocked, whatever it sends, right credentials included, so guessing costs time.
/// </summary>
/// <remarks>
/// Each attempt is judged by one <see cref="Decide"/> under its address's lock: "blocked" and "count this failure" are
/// one step, so concurrent guesses from one address cannot all pass a check before any of them is counted. A check
/// that takes time (bcrypt) takes its count before it runs and gives it back with <see cref="Refund"/> when the
/// credentials were right. Buckets that have refilled are dropped once many addresses are known.
/// </remarks>
public sealed class FailedAttempts(int perMinute, TimeProvider? time = null) : IDisposable
{
    private const int SweepAbove = 4096;
    private const double Rounding = 1e-9; // a count refilled in steps of elapsed time may fall short of 1 by a rounding error
    private readonly ConcurrentDictionary<IPAddress, Bucket> _buckets = new();
    private readonly TimeProvider _time = time ?? TimeProvider.System;
    private readonly double _perSecond = perMinute / 60.0;
    private int _sweepAt = SweepAbove;

    /// <summary>
    /// Judges one attempt from <paramref name="address"/>: <see cref="AttemptVerdict.Blocked"/> when it has no whole
    /// count left (nothing is counted; <paramref name="retryAfter"/> says when one is back), otherwise
    /// <see cref="AttemptVerdict.Failed"/> with one count taken when <paramref name="failed"/>, else
    /// <see cref="AttemptVerdict.Passed"/>.
    /// </summary>
    public AttemptVerdict Decide(IPAddress address, bool failed, out TimeSpan retryAfter)
    {
        retryAfter = TimeSpan.Zero;
        if (!failed && !_buckets.ContainsKey(address))
        {
            return AttemptVerdict.Passed; // an address that never failed has a full bucket; keep no state for it
        }

        while (true)
        {
            Bucket bucket = _buckets.GetOrAdd(address, static (_, state) => new Bucket(state.Limit, state.Now), (Limit: (double)perMinute, Now: _time.GetTimestamp()));
            lock (bucket)
            {
                if (bucket.Retired)
                {
                    continue; // dropped by a sweep while this thread waited: judge against the bucket now in the table
                }

                double counts = bucket.Refill(_time.GetTimestamp(), _time, _perSecond, perMinute);
                if (counts < 1 - Rounding)
                {
                    retryAfter = TimeSpan.FromTicks((long)Math.Ceiling((1 - counts) / _perSecond * TimeSpan.TicksPerSecond));
                    return AttemptVerdict.Blocked;
                }

                if (!failed)
                {
                    return AttemptVerdict.Passed;
                }

                bucket.Counts = counts - 1;
            }

            SweepIfLarge();
            return AttemptVerdict.Failed;
        }
    }

    /// <summary>How many addresses have a bucket that is not full (or was not full at the last sweep).</summary>
    public int TrackedAddresses => _buckets.Count;

    /// <summary>Gives back a count taken by <see cref="Decide"/> for an attempt that turned out right.</summary>
    public void Refund(IPAddress address)
    {
        if (_buckets.TryGetValue(address, out Bucket? bucket))
        {
            lock (bucket)
            {
                bucket.Counts = Math.Min(perMinute, bucket.Counts + 1);
            }
        }
    }

    public void Dispose() => _buckets.Clear();

    /// <summary>Drops the buckets that have refilled, once the table has grown past a threshold that doubles with it.</summary>
    private void SweepIfLarge()
    {
        int sweepAt = Volatile.Read(ref _sweepAt);
        if (_buckets.Count < sweepAt || Interlocked.CompareExchange(ref _sweepAt, int.MaxValue, sweepAt) != sweepAt)
        {
            return;
        }

        long now = _time.GetTimestamp();
        foreach (KeyValuePair<IPAddress, Bucket> entry in _buckets)
        {
            lock (entry.Value)
            {
                if (entry.Value.Refill(now, _time, _perSecond, perMinute) >= perMinute)
                {
                    entry.Value.Retired = true;
                    _buckets.TryRemove(entry);
                }
            }
        }

        Volatile.Write(ref _sweepAt, Math.Max(SweepAbove, _buckets.Count * 2));
    }

    private sealed class Bucket(double counts, long stamp)
    {
        public double Counts = counts;
        public long Stamp = stamp;
        public bool Retired;

        /// <summary>Adds what has refilled since the last look (capped at the limit) and returns the counts left.</summary>
        public double Refill(long now, TimeProvider time, double perSecond, int limit)
        {
            if (now > Stamp)
            {
                Counts = Math.Min(limit, Counts + (time.GetElapsedTime(Stamp, now).TotalSeconds * perSecond));
                Stamp = now;
            }

            return Counts;
        }
    }
}

/// <summary>What <see cref="FailedAttempts.Decide"/> made of one attempt.</summary>
public enum AttemptVerdict
{
    /// <summary>The address has counts left and the attempt was right (or not an attempt): nothing counted.</summary>
    Passed,

    /// <summary>A failed attempt, counted.</summary>
    Failed,

    /// <summary>The address has no whole count left: refused whatever it sent, nothing counted.</summary>
    Blocked,
}
