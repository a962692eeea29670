namespace Tunnel2.Balancing.Health;

/// <summary>
/// Passive health of one member: answers in a row that said it could not be reached, and the ejection they led to. After
/// <see cref="EjectionOptions.EjectAfter"/> such answers in a row the member is passed over for a backoff; once the backoff ends it takes
/// requests again, and one more failure ejects it again for twice as long, up to a ceiling. A good answer ends the run.
/// </summary>
public sealed class PassiveEjection
{
    private readonly Lock _lock = new();
    private int _unreachableInARow;
    private int _ejections;
    private long _ejectedUntil;

    /// <summary>Passed over now (a <see cref="TimeProvider"/> timestamp).</summary>
    public bool IsEjected(long now) => now < Volatile.Read(ref _ejectedUntil);

    /// <summary>Counts an answer that said the member could not be reached; true when this one ejects it, with how long for.</summary>
    public bool OnUnreachable(long now, long timestampFrequency, EjectionOptions options, out TimeSpan ejectedFor)
    {
        ejectedFor = TimeSpan.Zero;
        int ejectAfter = options.EjectAfter;
        TimeSpan backoff = options.Backoff;
        TimeSpan maxBackoff = options.MaxBackoff;
        if (ejectAfter == 0)
        {
            return false;
        }

        lock (_lock)
        {
            if (++_unreachableInARow < ejectAfter || now < _ejectedUntil)
            {
                return false;
            }

            ejectedFor = backoff;
            for (int i = 0; i < _ejections && ejectedFor < maxBackoff; i++)
            {
                ejectedFor *= 2;
            }

            ejectedFor = ejectedFor < maxBackoff ? ejectedFor : maxBackoff;
            _ejections++;
            Volatile.Write(ref _ejectedUntil, now + (long)(ejectedFor.TotalSeconds * timestampFrequency));
            return true;
        }
    }

    /// <summary>A good answer: the run of failures, and the backoff it built up, are over.</summary>
    public void OnAnswered()
    {
        if (Volatile.Read(ref _unreachableInARow) == 0)
        {
            return; // the usual case: no lock, no write
        }

        lock (_lock)
        {
            _unreachableInARow = 0;
            _ejections = 0;
        }
    }
}
