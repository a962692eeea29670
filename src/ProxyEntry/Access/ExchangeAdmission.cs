using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Heads;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Problems;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// The access step, after routing: the session's visitor rules, the node's drain, and the head that would cross the
/// tunnel (framing the tunnel must not pass on, headers over the limit). Rate limits run before, as middleware.
/// </summary>
internal sealed class ExchangeAdmission
{
    private readonly VisitorAccess _access;
    private readonly PublicDrain _drain;
    private readonly FailureResponder _failures;
    private readonly long _maxHeadersBytes;

    public ExchangeAdmission(VisitorAccess access, PublicDrain drain, FailureResponder failures, IOptions<ProxyEntryOptions> options)
    {
        _access = access;
        _drain = drain;
        _failures = failures;
        _maxHeadersBytes = options.Value.Limits.MaxRequestHeadersBytes;
    }

    /// <returns>False, with the refusal being written, when the request goes no further.</returns>
    public bool TryAdmit(HttpContext context, in SessionRoute route, string backendTarget, out RequestHead head, out Task refusal)
    {
        string session = route.Session;
        head = null!;
        if (_access.Check(context, session) is { } denial)
        {
            refusal = denial.WriteAsync(context);
            return false;
        }

        if (_drain.IsDraining)
        {
            refusal = _failures.FailAsync(context, streamId: 0, session, ForwardingFailure.ServerDraining);
            return false;
        }

        head = RequestHeadBuilder.Build(context, backendTarget, route.Prefix, out long headerBytes, out RequestHeadProblem problem);
        if (ForwardingFailure.FromHeadProblem(problem) is { } refused)
        {
            // The caller framed this request oddly; what follows it on the connection is not trusted either.
            context.Response.Headers.Connection = "close";
            refusal = _failures.FailAsync(context, streamId: 0, session, refused);
            return false;
        }

        if (headerBytes > _maxHeadersBytes)
        {
            refusal = _failures.FailAsync(context, streamId: 0, session, ForwardingFailure.HeadersTooLarge);
            return false;
        }

        refusal = Task.CompletedTask;
        return true;
    }
}
