using Microsoft.AspNetCore.Http;
using Tunnel2.Hosting;
using Tunnel2.Protocol.Frames;
using Tunnel2.ProxyEntry.Heads;

namespace Tunnel2.ProxyEntry.Problems;

/// <summary>What the caller is told when an exchange fails before its response head: status, problem type and title.</summary>
public readonly record struct ForwardingFailure(int Status, string Type, string Title, string Reason)
{
    public static readonly ForwardingFailure UplinkLost =
        new(StatusCodes.Status502BadGateway, ProblemTypes.UplinkLost, "Tunnel connection lost", "uplink-lost");

    public static readonly ForwardingFailure ResponseTimeout =
        new(StatusCodes.Status504GatewayTimeout, ProblemTypes.BackendTimeout, "Backend did not answer in time", "timeout");

    public static readonly ForwardingFailure HeadersTooLarge =
        new(StatusCodes.Status431RequestHeaderFieldsTooLarge, ProblemTypes.HeadersTooLarge, "Request headers too large for the tunnel", "headers-too-large");

    public static readonly ForwardingFailure StreamLimit =
        new(StatusCodes.Status503ServiceUnavailable, ProblemTypes.Overloaded, "Every tunnel connection of the session is at its stream limit", "stream-limit");

    public static readonly ForwardingFailure NoReadyClient =
        new(StatusCodes.Status503ServiceUnavailable, ProblemTypes.NoReadyClient, "No client of the session has a ready backend", "no-ready-client");

    public static readonly ForwardingFailure WarmingUp =
        new(StatusCodes.Status503ServiceUnavailable, ProblemTypes.WarmingUp, "Tunnel server node is starting: its clients may not have reconnected yet", "warming-up");

    public static readonly ForwardingFailure ServerDraining =
        new(StatusCodes.Status503ServiceUnavailable, ProblemTypes.Draining, "Tunnel server is shutting down", "server-draining");

    public static readonly ForwardingFailure RequestBodyTooSlow =
        new(StatusCodes.Status408RequestTimeout, ProblemTypes.RequestBodyTooSlow, "Request body arrived below the minimum data rate", "body-too-slow");

    /// <summary>The caller's connection failed while its body was sent: nobody is left to tell; counted as 499, logged as gone.</summary>
    public static readonly ForwardingFailure CallerGone =
        new(499, ProblemTypes.CallerGone, "Caller closed the connection", "caller-gone");

    public static readonly ForwardingFailure InvalidRequestBody =
        new(StatusCodes.Status400BadRequest, ProblemTypes.InvalidRequestBody, "Request body framing is invalid", "invalid-body");

    public static readonly ForwardingFailure PathOutsideSession =
        new(StatusCodes.Status400BadRequest, ProblemTypes.PathOutsideSession, "Path climbs above the session root", "path-outside-session");

    public static readonly ForwardingFailure InvalidHeaderName =
        new(StatusCodes.Status400BadRequest, ProblemTypes.InvalidHeader, "Header name with a character outside RFC 9110 token", "invalid-header-name");

    public static readonly ForwardingFailure ContentLengthWithTransferEncoding =
        new(StatusCodes.Status400BadRequest, ProblemTypes.AmbiguousFraming, "Content-Length and Transfer-Encoding together", "length-and-transfer-encoding");

    public static readonly ForwardingFailure InvalidTransferEncoding =
        new(StatusCodes.Status400BadRequest, ProblemTypes.AmbiguousFraming, "Transfer-Encoding must name chunked exactly once", "invalid-transfer-encoding");

    public static readonly ForwardingFailure UnsupportedTransferCoding =
        new(StatusCodes.Status501NotImplemented, ProblemTypes.UnsupportedTransferCoding, "Transfer coding other than chunked", "unsupported-transfer-coding");

    /// <summary>The refusal for a head that must not cross the tunnel; null when it may.</summary>
    public static ForwardingFailure? FromHeadProblem(RequestHeadProblem problem) => problem switch
    {
        RequestHeadProblem.None => null,
        RequestHeadProblem.InvalidHeaderName => InvalidHeaderName,
        RequestHeadProblem.ContentLengthWithTransferEncoding => ContentLengthWithTransferEncoding,
        RequestHeadProblem.UnsupportedTransferCoding => UnsupportedTransferCoding,
        _ => InvalidTransferEncoding,
    };

    /// <summary>Maps the reason a stream was reset (by the client, or by this side) to what the caller sees.</summary>
    public static ForwardingFailure FromResetCode(ProtocolErrorCode code) => code switch
    {
        ProtocolErrorCode.BackendUnreachable or ProtocolErrorCode.BackendConnectFailed =>
            new(StatusCodes.Status502BadGateway, ProblemTypes.BackendUnreachable, "Backend unreachable", "backend-unreachable"),
        ProtocolErrorCode.BackendTimeout or ProtocolErrorCode.ResponseHeadTimeout => ResponseTimeout,
        ProtocolErrorCode.Overloaded =>
            new(StatusCodes.Status503ServiceUnavailable, ProblemTypes.Overloaded, "Tunnel client is at capacity", "overloaded"),
        ProtocolErrorCode.Draining =>
            new(StatusCodes.Status503ServiceUnavailable, ProblemTypes.Draining, "Tunnel client is shutting down", "draining"),
        ProtocolErrorCode.BackendAborted =>
            new(StatusCodes.Status502BadGateway, ProblemTypes.BadGateway, "The backend's answer was malformed or cut short", "backend-aborted"),
        ProtocolErrorCode.RequestBodyTooLarge =>
            new(StatusCodes.Status413PayloadTooLarge, ProblemTypes.BodyTooLarge, "Request body too large", "body-too-large"),
        _ => new(StatusCodes.Status502BadGateway, ProblemTypes.BadGateway, "Bad gateway", code.ToString()),
    };
}
