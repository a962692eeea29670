namespace Tunnel2.Balancing.Affinity;

/// <summary>
/// The one affinity-cookie format of both sides: <c>name=key; Path=…; HttpOnly; SameSite=Lax</c>, and <c>Secure</c> when
/// the caller came over TLS. The server scopes it to the session's path (or the whole host for a session's own host
/// name), the client to the whole origin.
/// </summary>
public static class AffinityCookie
{
    /// <returns>The <c>Set-Cookie</c> value.</returns>
    public static string Format(string name, string memberKey, string path, bool secure) =>
        string.Concat(name, "=", memberKey, "; Path=", path, secure ? "; HttpOnly; SameSite=Lax; Secure" : "; HttpOnly; SameSite=Lax");
}
