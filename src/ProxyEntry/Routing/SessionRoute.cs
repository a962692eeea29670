namespace Tunnel2.ProxyEntry.Routing;

/// <summary>Where a public request goes: its session, the path prefix stripped from it, and whether its host named it.</summary>
/// <param name="Prefix"><c>/session/{id}</c> for path routing; empty when the host named the session.</param>
/// <param name="ByHost">Host routing chose the session (its 404 names the host).</param>
internal readonly record struct SessionRoute(string Session, string Prefix, bool ByHost);
