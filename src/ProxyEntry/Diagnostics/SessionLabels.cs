using System.Collections.Concurrent;

namespace Tunnel2.ProxyEntry.Diagnostics;

/// <summary>
/// Bounds the <c>tunnel2.session</c> label of per-session metrics: the first <c>limit</c> sessions seen keep their own id,
/// every later one is counted as <see cref="Other"/>, so thousands of sessions cannot grow an exporter's series without
/// end. Chosen over "top N by traffic": a series that changed its label as ranks moved would break its rate.
/// </summary>
public sealed class SessionLabels(int limit)
{
    public const string Other = "_other";

    /// <summary>The label of requests for a session that has no client (404): unknown ids never take one of the labels.</summary>
    public const string Unknown = "_unknown";

    private readonly ConcurrentDictionary<string, string> _labels = new(StringComparer.Ordinal);

    public string LabelFor(string session)
    {
        if (_labels.TryGetValue(session, out string? label))
        {
            return label;
        }

        return _labels.Count < limit ? _labels.GetOrAdd(session, session) : Other;
    }
}
