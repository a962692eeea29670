namespace Tunnel2.Balancing.Health;

/// <summary>
/// When passive health passes a member over (<see cref="PassiveEjection"/>): after <see cref="EjectAfter"/> failures in
/// a row, for <see cref="Backoff"/>, doubled on each ejection that follows without a good answer between, up to
/// <see cref="MaxBackoff"/>. One record for the server's clients (HTTP and TCP) and a client's backends.
/// </summary>
/// <param name="EjectAfter">Failures in a row that eject; 0 never ejects.</param>
public sealed record EjectionOptions(int EjectAfter, TimeSpan Backoff, TimeSpan MaxBackoff)
{
    /// <summary>3 in a row, 1 s, up to 30 s: the options' defaults, and what a client uses for its backends.</summary>
    public static readonly EjectionOptions Default = new(3, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(30));

    /// <summary>The settings' problem, or null: a ceiling below the first backoff, or a negative count.</summary>
    public string? Problem =>
        EjectAfter < 0 ? "EjectAfter must not be negative"
        : Backoff < TimeSpan.Zero ? "EjectionBackoff must not be negative"
        : MaxBackoff < Backoff ? "MaxEjectionBackoff must not be below EjectionBackoff"
        : null;
}
