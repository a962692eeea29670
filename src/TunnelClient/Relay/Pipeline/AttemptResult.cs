namespace Tunnel2.TunnelClient.Relay.Pipeline;

/// <summary>What one attempt (or one of its steps) hands back: how it ended, and the failure to report unless retried.</summary>
internal readonly record struct AttemptResult(AttemptOutcome Outcome, RelayFailure? Failure)
{
    public static AttemptResult Done => new(AttemptOutcome.Done, null);

    public static AttemptResult Answered => new(AttemptOutcome.Answered, null);

    /// <summary>The exchange failed for good: report <paramref name="failure"/>.</summary>
    public static AttemptResult Failed(RelayFailure failure) => new(AttemptOutcome.Done, failure);
}
