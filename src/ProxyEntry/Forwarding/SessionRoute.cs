namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>Where a public request goes: its session, the path prefix stripped from it, and the host that named it.</summary>
/// <param name="Prefix"><c>/session/{id}</c> for path routing; empty when the host named the session.</param>
/// <param name="Host">The request's host when host routing chose the session (its 404 names it); null for path routing.</param>
internal readonly record struct SessionRoute(string Session, string Prefix, string? Host);
