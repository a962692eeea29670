using Microsoft.Net.Http.Headers;
using Tunnel2.Balancing;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.TunnelClient.Backends;

/// <summary>
/// A request head that crossed the tunnel, as the affinity policies read it: its <c>Cookie</c> fields, its headers (the
/// first field of a name), and the caller's address from <c>X-Forwarded-For</c>, which the server replaces with the one
/// address it saw. An affinity cookie is for the whole origin (in path mode the path rewriting moves it under the
/// session's prefix), and secure when the server says the caller came over TLS (<c>X-Forwarded-Proto</c>).
/// </summary>
internal readonly struct HeadAffinityRequest(RequestHead head) : IAffinityRequest
{
    public string? Cookie(string name)
    {
        foreach (HeaderField field in head.Headers)
        {
            // A request may carry several Cookie fields (HTTP/2 splits them): look in each.
            if (string.Equals(field.Name, HeaderNames.Cookie, StringComparison.OrdinalIgnoreCase) && CookieValue(field.Value, name) is { } value)
            {
                return value;
            }
        }

        return null;
    }

    public string? Header(string name)
    {
        foreach (HeaderField field in head.Headers)
        {
            if (string.Equals(field.Name, name, StringComparison.OrdinalIgnoreCase))
            {
                return field.Value;
            }
        }

        return null;
    }

    public string? ClientAddress() => Header("X-Forwarded-For");

    public string CookiePath => "/";

    public bool IsHttps
    {
        get
        {
            bool https = false;
            foreach (HeaderField header in head.Headers)
            {
                if (string.Equals(header.Name, "X-Forwarded-Proto", StringComparison.OrdinalIgnoreCase))
                {
                    https = string.Equals(header.Value, "https", StringComparison.OrdinalIgnoreCase);
                }
            }

            return https;
        }
    }

    /// <summary>The value of cookie <paramref name="name"/> in a Cookie field (<c>a=1; b=2</c>), or null (ASP.NET Core's parser).</summary>
    internal static string? CookieValue(string cookies, string name)
    {
        if (CookieHeaderValue.TryParseList([cookies], out IList<CookieHeaderValue>? parsed))
        {
            foreach (CookieHeaderValue cookie in parsed)
            {
                if (cookie.Name.Equals(name, StringComparison.Ordinal))
                {
                    return cookie.Value.ToString();
                }
            }
        }

        return null;
    }
}
