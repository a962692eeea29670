using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.Http;
using Microsoft.Net.Http.Headers;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>The login cookie of <see cref="OidcRule"/>: its name, its format under the Data Protection keys, and its removal before forwarding.</summary>
public static class LoginCookie
{
    public const string Name = "tunnel2-login";

    /// <summary>The cookie handler's scheme for <paramref name="session"/> (the format's purpose names it).</summary>
    public static string SchemeName(string session) => "tunnel2-login:" + session;

    /// <summary>The format of the login cookie of <paramref name="session"/>: what a node that shares the keys can read.</summary>
    public static TicketDataFormat TicketFormat(IDataProtectionProvider keys, string session) =>
        new(keys.CreateProtector("Microsoft.AspNetCore.Authentication.Cookies.CookieAuthenticationMiddleware", SchemeName(session), "v2"));

    /// <summary>Takes the login cookie off a request the backend gets; the app's own cookies stay.</summary>
    public static void RemoveFrom(HttpRequest request)
    {
        if (request.Headers.Cookie.Count == 0)
        {
            return;
        }

        var kept = new List<string>();
        foreach (string? header in request.Headers.Cookie)
        {
            foreach (string part in (header ?? string.Empty).Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            {
                if (!part.StartsWith(Name, StringComparison.Ordinal))
                {
                    kept.Add(part);
                }
            }
        }

        if (kept.Count == 0)
        {
            request.Headers.Remove(HeaderNames.Cookie);
        }
        else
        {
            request.Headers.Cookie = string.Join("; ", kept);
        }
    }
}
