using Microsoft.AspNetCore.Http;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// The uploads now being sent up a stream, and one clock for all of them: a body held back by the peer's windows is
/// read from its caller no faster than the backend reads, so Kestrel reads nothing from that caller's socket and never
/// sees it reset (Linux reports the reset only after what it had received). Every <see cref="Interval"/> each upload
/// out of credit has its caller's connection asked (<see cref="CallerConnection"/>); a failed one is aborted, which ends
/// the body's wait and the exchange as a caller gone, instead of the backend being fed what the kernel held first.
/// One timer for the process, a dictionary that stops allocating once grown, and a syscall only per held-back upload.
/// </summary>
internal sealed class HeldBackUploads : IDisposable
{
    public static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(250);

    private readonly Lock _sync = new();
    private readonly Dictionary<IHttpExchange, HttpContext> _uploads = [];
    private readonly List<HttpContext> _failed = [];
    private readonly Timer _clock;

    /// <summary>1 while a sweep runs: a timer's ticks may overlap on a stalled machine, and the failed list is one sweep's.</summary>
    private int _sweeping;

    public HeldBackUploads() => _clock = new Timer(static state => ((HeldBackUploads)state!).Sweep(), this, Interval, Interval);

    /// <summary>Uploads watched now (tests).</summary>
    public int Count
    {
        get
        {
            lock (_sync)
            {
                return _uploads.Count;
            }
        }
    }

    /// <summary>Watches the caller of <paramref name="stream"/>'s body until the returned value is disposed.</summary>
    public Watch Start(IHttpExchange stream, HttpContext context)
    {
        lock (_sync)
        {
            _uploads[stream] = context;
        }

        return new Watch(this, stream);
    }

    public void Dispose() => _clock.Dispose();

    private void Stop(IHttpExchange stream)
    {
        lock (_sync)
        {
            _uploads.Remove(stream);
        }
    }

    /// <summary>One look at every watched upload (the clock's tick; tests call it directly).</summary>
    internal void Sweep()
    {
        if (Interlocked.Exchange(ref _sweeping, 1) == 1)
        {
            return; // the last tick's sweep is still at work: this tick has nothing to add
        }

        try
        {
            SweepOnce();
        }
        finally
        {
            Volatile.Write(ref _sweeping, 0);
        }
    }

    private void SweepOnce()
    {
        lock (_sync)
        {
            foreach ((IHttpExchange stream, HttpContext context) in _uploads)
            {
                if (!stream.HasSendCredit && CallerConnection.HasFailed(context))
                {
                    _failed.Add(context);
                }
            }
        }

        // Outside the lock: an abort runs Kestrel's callbacks, which may end an upload and stop its watch.
        foreach (HttpContext context in _failed)
        {
            try
            {
                context.Abort();
            }
            catch (ObjectDisposedException)
            {
                // The exchange ended between the look and the abort and Kestrel disposed its context: nothing is left
                // to abort. Uncaught on this timer thread it ended the server (seen under load in StormTests).
            }
        }

        _failed.Clear();
    }

    /// <summary>Stops watching an upload when disposed.</summary>
    public readonly struct Watch(HeldBackUploads owner, IHttpExchange stream) : IDisposable
    {
        public void Dispose() => owner.Stop(stream);
    }
}
