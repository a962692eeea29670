namespace Tunnel2.Balancing;

/// <summary>
/// One side's view of a request, as the affinity policies read it: the server reads ASP.NET Core's request, the client
/// the head that crossed the tunnel. Implemented by small structs, so that reading costs no allocation.
/// </summary>
public interface IAffinityRequest
{
    /// <summary>The value of the cookie named <paramref name="name"/>, or null.</summary>
    string? Cookie(string name);

    /// <summary>The value of the header named <paramref name="name"/>, or null when the request has none.</summary>
    string? Header(string name);

    /// <summary>The caller's IP address as the server saw it, or null.</summary>
    string? ClientAddress();

    /// <summary>The path an affinity cookie set in the answer applies to.</summary>
    string CookiePath { get; }

    /// <summary>The caller came over TLS: an affinity cookie is then <c>Secure</c>.</summary>
    bool IsHttps { get; }
}
