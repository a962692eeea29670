using System.Diagnostics;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.Hosting.Tracing;

/// <summary>
/// W3C Trace Context (<c>traceparent</c>, <c>tracestate</c>) in a forwarded request head: read the caller's, and hand the
/// next hop this hop's span instead, so the backend's span is a child of the tunnel's and the trace runs unbroken.
/// </summary>
public static class TraceContext
{
    public const string TraceParent = "traceparent";
    public const string TraceState = "tracestate";

    /// <summary>The parent a request head names, or default when it names none (or a malformed one).</summary>
    public static ActivityContext ParentOf(List<HeaderField> headers)
    {
        string? parent = null, state = null;
        foreach (HeaderField field in headers)
        {
            if (string.Equals(field.Name, TraceParent, StringComparison.OrdinalIgnoreCase))
            {
                parent = field.Value;
            }
            else if (string.Equals(field.Name, TraceState, StringComparison.OrdinalIgnoreCase))
            {
                state = field.Value;
            }
        }

        return parent is not null && ActivityContext.TryParse(parent, state, isRemote: true, out ActivityContext context) ? context : default;
    }

    /// <summary>Makes <paramref name="activity"/> the parent the next hop sees: its <c>traceparent</c> replaces the caller's.</summary>
    public static void Inject(List<HeaderField> headers, Activity activity)
    {
        headers.RemoveAll(static field => string.Equals(field.Name, TraceParent, StringComparison.OrdinalIgnoreCase)
                                          || string.Equals(field.Name, TraceState, StringComparison.OrdinalIgnoreCase));
        headers.Add(new HeaderField(TraceParent, activity.Id!));
        if (!string.IsNullOrEmpty(activity.TraceStateString))
        {
            headers.Add(new HeaderField(TraceState, activity.TraceStateString));
        }
    }
}
