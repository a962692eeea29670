namespace Tunnel2.ProxyEntry.Problems;

/// <summary>The <c>type</c> URIs of the problems the tunnel itself reports ("What callers see" in docs/http-semantics.md and docs/protocol.md §5 say when each is sent).</summary>
public static class ProblemTypes
{
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
}
