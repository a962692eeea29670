namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// The visitor policies in force, one snapshot (replaced whole when the credentials file changes). A session's policy
/// is the one naming it exactly, else the matching pattern that fixes the most characters (ties: the pattern text in
/// ordinal order); a session no policy matches is open to every visitor.
/// </summary>
public sealed class VisitorPolicies
{
    public static readonly VisitorPolicies None = new([]);

    private readonly Dictionary<string, VisitorPolicy> _exact = new(StringComparer.Ordinal);
    private readonly VisitorPolicy[] _patterns;

    public VisitorPolicies(IEnumerable<VisitorPolicy> policies)
    {
        var patterns = new List<VisitorPolicy>();
        foreach (VisitorPolicy policy in policies)
        {
            if (policy.Sessions.IsExact)
            {
                _exact[policy.Sessions.Text] = policy;
            }
            else
            {
                patterns.Add(policy);
            }
        }

        patterns.Sort(static (a, b) => a.Sessions.LiteralCount != b.Sessions.LiteralCount
            ? b.Sessions.LiteralCount.CompareTo(a.Sessions.LiteralCount)
            : string.CompareOrdinal(a.Sessions.Text, b.Sessions.Text));
        _patterns = [.. patterns];
        Count = _exact.Count + _patterns.Length;
    }

    public int Count { get; }

    /// <summary>The entries that name one session exactly.</summary>
    public IEnumerable<VisitorPolicy> Exact => _exact.Values;

    /// <summary>The entries with a wildcard, in the order a session is matched against them.</summary>
    public IReadOnlyList<VisitorPolicy> Patterns => _patterns;

    public VisitorPolicy? For(string session)
    {
        if (_exact.TryGetValue(session, out VisitorPolicy? exact))
        {
            return exact;
        }

        foreach (VisitorPolicy policy in _patterns)
        {
            if (policy.Sessions.IsMatch(session))
            {
                return policy;
            }
        }

        return null;
    }
}
