using Tunnel2.Protocol.Heads;

namespace Tunnel2.TunnelClient.Inspection;

/// <summary>
/// One request and its response as the inspector keeps them: the request as the tunnel delivered it (before the client
/// adds its trace context), the response as it went back (after cookie and redirect rewriting). Header values are the
/// real ones; secrets are redacted when shown (<see cref="InspectorRedaction"/>), so a replay as is still carries them.
/// </summary>
public sealed record InspectedExchange(
    long Id,
    long? ReplayOf,
    DateTimeOffset StartedAt,
    TimeSpan? Wait,
    TimeSpan Duration,
    string? Backend,
    InspectionOutcome Outcome,
    string? Error,
    string Method,
    string Target,
    IReadOnlyList<HeaderField> RequestHeaders,
    CapturedBody? RequestBody,
    int? Status,
    IReadOnlyList<HeaderField>? ResponseHeaders,
    CapturedBody? ResponseBody)
{
    /// <summary>Asked to switch protocols (a WebSocket, …): such a request is not replayed.</summary>
    public bool IsUpgradeRequest => InspectorViews.ValueOf(RequestHeaders, "Upgrade") is not null;
}
