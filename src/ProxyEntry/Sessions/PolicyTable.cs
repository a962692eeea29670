using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Policy;

namespace Tunnel2.ProxyEntry.Sessions;

/// <summary>
/// One immutable snapshot of every session's effective <see cref="SessionPolicy"/>, built whole by
/// <see cref="SessionPolicies"/> whenever a source changes. Every session named anywhere (an options entry, an exact
/// entry of the credentials file, declared rules) has its policy made in advance; any other session gets the policy of
/// the first wildcard entry of the file it matches, also made in advance, else the default. A lookup allocates nothing.
/// </summary>
internal sealed class PolicyTable
{
    private readonly Dictionary<string, SessionPolicy> _named;
    private readonly (SessionPattern Pattern, SessionPolicy Policy)[] _patterns;
    private readonly SessionPolicy _default;

    private PolicyTable(Dictionary<string, SessionPolicy> named, (SessionPattern, SessionPolicy)[] patterns, SessionPolicy fallback)
    {
        _named = named;
        _patterns = patterns;
        _default = fallback;
    }

    public SessionPolicy For(string session)
    {
        if (_named.Count > 0 && _named.TryGetValue(session, out SessionPolicy? named))
        {
            return named;
        }

        foreach ((SessionPattern pattern, SessionPolicy policy) in _patterns)
        {
            if (pattern.IsMatch(session))
            {
                return policy;
            }
        }

        return _default;
    }

    /// <summary>
    /// The merge, in the documented order: the options (<paramref name="options"/> over <paramref name="defaults"/>), then
    /// the credentials file's visitor entry for the session, then the rules its client declared.
    /// </summary>
    public static PolicyTable Build(SessionPolicy defaults, IReadOnlyDictionary<string, SessionPolicy> options, VisitorPolicies file,
        IReadOnlyDictionary<string, VisitorPolicy> declared)
    {
        var named = new Dictionary<string, SessionPolicy>(StringComparer.Ordinal);
        foreach (string session in options.Keys.Concat(file.Exact.Select(static entry => entry.Sessions.Text)).Concat(declared.Keys))
        {
            if (!named.ContainsKey(session))
            {
                SessionPolicy own = options.TryGetValue(session, out SessionPolicy? fromOptions) ? fromOptions : defaults;
                named[session] = own.WithVisitors(Rules(file.For(session), declared.GetValueOrDefault(session)));
            }
        }

        (SessionPattern, SessionPolicy)[] patterns = [.. file.Patterns.Select(entry => (entry.Sessions, defaults.WithVisitors(new SessionVisitorRules(entry, null))))];
        return new PolicyTable(named, patterns, defaults);
    }

    private static SessionVisitorRules Rules(VisitorPolicy? fromFile, VisitorPolicy? declared) =>
        fromFile is null && declared is null ? SessionVisitorRules.None : new SessionVisitorRules(fromFile, declared);
}
