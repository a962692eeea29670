namespace Tunnel2.Hosting;

/// <summary>
/// The <c>type</c> URIs of the problems the tunnel itself reports ("What callers see" in docs/http-semantics.md and
/// docs/protocol.md §5 say when each is sent): the public entry's, the admin listeners', the inspector's and the
/// uplink handshake's. No other file spells one out (ProblemTypesTests).
/// </summary>
public static class ProblemTypes
{
    /// <summary>What every type URI starts with.</summary>
    public const string Prefix = "urn:tunnel2:problem:";

    public const string TunnelNotFound = "urn:tunnel2:problem:tunnel-not-found";
    public const string BackendUnreachable = "urn:tunnel2:problem:backend-unreachable";
    public const string BackendTimeout = "urn:tunnel2:problem:backend-timeout";
    public const string UplinkLost = "urn:tunnel2:problem:uplink-lost";
    public const string Overloaded = "urn:tunnel2:problem:overloaded";
    public const string NoReadyClient = "urn:tunnel2:problem:no-ready-client";
    public const string Draining = "urn:tunnel2:problem:draining";
    public const string WarmingUp = "urn:tunnel2:problem:warming-up";
    public const string HeadersTooLarge = "urn:tunnel2:problem:headers-too-large";
    public const string BodyTooLarge = "urn:tunnel2:problem:body-too-large";
    public const string RequestBodyTooSlow = "urn:tunnel2:problem:request-body-too-slow";
    public const string InvalidRequestBody = "urn:tunnel2:problem:invalid-request-body";

    /// <summary>The caller left mid-exchange: never sent (nobody is left to read it); it names the failure in the
    /// metrics, the logs and the inspector.</summary>
    public const string CallerGone = "urn:tunnel2:problem:caller-gone";
    public const string BadGateway = "urn:tunnel2:problem:bad-gateway";
    public const string PathOutsideSession = "urn:tunnel2:problem:path-outside-session";
    public const string InvalidHeader = "urn:tunnel2:problem:invalid-header";
    public const string AmbiguousFraming = "urn:tunnel2:problem:ambiguous-framing";
    public const string UnsupportedTransferCoding = "urn:tunnel2:problem:unsupported-transfer-coding";
    public const string VisitorForbidden = "urn:tunnel2:problem:visitor-forbidden";
    public const string VisitorUnauthorized = "urn:tunnel2:problem:visitor-unauthorized";
    public const string TooManyFailedAttempts = "urn:tunnel2:problem:too-many-failed-attempts";
    public const string RateLimited = "urn:tunnel2:problem:rate-limited";

    /// <summary>The admin listener's certificate ask (docs/edge.md) was asked without <c>?domain=</c>.</summary>
    public const string EdgeAskNoDomain = "urn:tunnel2:problem:edge-ask-no-domain";

    /// <summary>The certificate ask's no: the edge may not get a certificate for that name.</summary>
    public const string EdgeAskRefused = "urn:tunnel2:problem:edge-ask-refused";

    /// <summary>A path that no endpoint of the listener serves (the public port's admin paths answer this too).</summary>
    public const string NotFound = "urn:tunnel2:problem:not-found";

    /// <summary>The public port answered the uplink path: the client dialled it instead of the tunnel port.</summary>
    public const string WrongPort = "urn:tunnel2:problem:wrong-port";

    /// <summary>The admin API: the session named has no client.</summary>
    public const string NoSuchSession = "urn:tunnel2:problem:no-such-session";

    /// <summary>The admin API: the session has no client with that id.</summary>
    public const string NoSuchClient = "urn:tunnel2:problem:no-such-client";

    /// <summary>An admin listener asked without its token.</summary>
    public const string AdminToken = "urn:tunnel2:problem:admin-token";

    /// <summary>The node is stopping: its <c>/healthz</c> says so, and it refuses new uplinks.</summary>
    public const string ServerDraining = "urn:tunnel2:problem:server-draining";

    /// <summary>The client's inspector: a replay's edits cannot be applied.</summary>
    public const string ReplayEdit = "urn:tunnel2:problem:replay-edit";

    /// <summary>The client's inspector: the request cannot be replayed.</summary>
    public const string ReplayRefused = "urn:tunnel2:problem:replay-refused";

    /// <summary>The client's inspector: the request asked for is no longer kept.</summary>
    public const string RequestNotKept = "urn:tunnel2:problem:request-not-kept";

    /// <summary>The type of an uplink handshake's refusal, named by its reason (docs/protocol.md §5).</summary>
    public static string ForReason(string reason) => Prefix + reason;
}
