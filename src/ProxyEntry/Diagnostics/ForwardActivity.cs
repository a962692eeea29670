using System.Diagnostics;
using Tunnel2.Protocol.Heads;
using Tunnel2.Hosting.Tracing;

namespace Tunnel2.ProxyEntry.Diagnostics;

/// <summary>
/// The tunnel's span for one request, when a tracer listens: a child of the caller's trace (ASP.NET Core's request
/// span, or the caller's <c>traceparent</c> when that span is off), handed on to the client in the forwarded head.
/// </summary>
internal static class ForwardActivity
{
    public static Activity? Start(RequestHead head, string session)
    {
        if (!ProxyEntryTracing.Source.HasListeners())
        {
            return null;
        }

        ActivityContext parent = Activity.Current?.Context ?? TraceContext.ParentOf(head.Headers);
        Activity? activity = ProxyEntryTracing.Source.StartActivity(ProxyEntryTracing.ForwardSpan, ActivityKind.Client, parent);
        if (activity is not null)
        {
            activity.SetTag(ProxyEntryMetrics.SessionTag, session);
            TraceContext.Inject(head.Headers, activity);
        }

        return activity;
    }
}
