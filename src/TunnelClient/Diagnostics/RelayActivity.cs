using System.Diagnostics;
using Tunnel2.Protocol.Heads;
using Tunnel2.Hosting.Tracing;

namespace Tunnel2.TunnelClient.Diagnostics;

/// <summary>The client's span for one request relayed to a backend (<see cref="TunnelClientTracing.RelaySpan"/>).</summary>
internal static class RelayActivity
{
    /// <summary>The tag naming the backend that took the request (the last one tried).</summary>
    public const string BackendTag = "tunnel2.backend";

    /// <summary>
    /// The span, when a tracer listens: a child of the server's span named in the stream's <c>traceparent</c>, and the
    /// parent the backend sees in its place.
    /// </summary>
    public static Activity? Start(RequestHead request)
    {
        if (!TunnelClientTracing.Source.HasListeners())
        {
            return null;
        }

        Activity? activity = TunnelClientTracing.Source.StartActivity(TunnelClientTracing.RelaySpan, ActivityKind.Server, TraceContext.ParentOf(request.Headers));
        if (activity is not null)
        {
            TraceContext.Inject(request.Headers, activity);
        }

        return activity;
    }
}
