namespace Tunnel2.TunnelClient.Relay.Retry;

/// <summary>What the retry policy does after an attempt that did not end the exchange.</summary>
internal enum RetryDecision
{
    /// <summary>Report the attempt's failure.</summary>
    None,

    /// <summary>Try again on the same backend, on a fresh connection.</summary>
    SameBackend,

    /// <summary>Try a backend the request has not tried yet, if there is one.</summary>
    AnotherBackend,
}
