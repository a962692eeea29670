using Tunnel2.Protocol.Heads;

namespace Tunnel2.TunnelClient.Relay.Rewriting;

/// <summary>
/// In path mode the backend is served at <c>/session/{id}</c> on the public side but answers as if it sat at its own
/// root. Like nginx's <c>proxy_redirect default</c> and <c>proxy_cookie_path</c>, this rewrites a response's
/// <c>Location</c>, <c>Content-Location</c> and <c>Refresh</c> URLs that point at the backend's own origin or at the
/// caller's host (to the public origin plus the prefix) or are root-relative (to the prefix plus the path), and gives a <c>Set-Cookie</c>
/// <c>Path=/…</c> the prefix, so one session's cookies do not reach every other session on the same host. The prefix and
/// the public origin come from the request's <c>X-Forwarded-Prefix</c>, <c>-Proto</c> and <c>-Host</c>. A value
/// already under the prefix, a relative one (<c>next.html</c>) and one on another origin stay as they are.
/// </summary>
public sealed class PublicPathRewriter
{
    private readonly Uri _backend;

    /// <param name="backend">The backend's base URL, as the client dials it and names it in <c>Host</c>.</param>
    public PublicPathRewriter(Uri backend)
    {
        _backend = backend;
    }

    /// <summary>Rewrites the fields of <paramref name="response"/> in place for the public side of <paramref name="request"/>.</summary>
    public void Rewrite(List<HeaderField> response, RequestHead request)
    {
        PublicBase? publicBase = null;
        for (int i = 0; i < response.Count; i++)
        {
            (string name, string value) = response[i];
            string? rewritten = null;
            if (name.Equals("Location", StringComparison.OrdinalIgnoreCase) || name.Equals("Content-Location", StringComparison.OrdinalIgnoreCase))
            {
                rewritten = RewriteUrl(value, publicBase ??= PublicBase.Of(request));
            }
            else if (name.Equals("Refresh", StringComparison.OrdinalIgnoreCase))
            {
                rewritten = RewriteRefresh(value, publicBase ??= PublicBase.Of(request));
            }
            else if (name.Equals("Set-Cookie", StringComparison.OrdinalIgnoreCase))
            {
                rewritten = RewriteCookiePath(value, (publicBase ??= PublicBase.Of(request)).Prefix);
            }

            if (rewritten is not null)
            {
                response[i] = new HeaderField(name, rewritten);
            }
        }
    }

    /// <returns>The public URL for <paramref name="url"/>, or null when it stays as it is.</returns>
    private string? RewriteUrl(string url, PublicBase publicBase)
    {
        if (publicBase.Prefix.Length == 0)
        {
            return null; // not path mode (no prefix was stripped): the backend's own paths are the public ones
        }

        if (url.StartsWith('/') && !url.StartsWith("//", StringComparison.Ordinal))
        {
            return IsUnderPrefix(url, publicBase.Prefix) ? null : publicBase.Prefix + url;
        }

        if (!Uri.TryCreate(url, UriKind.Absolute, out Uri? absolute)
            || !(IsBackendOrigin(absolute) || IsPublicHost(absolute, publicBase.Host)))
        {
            return null; // relative to the current page, or somewhere else entirely
        }

        // Path, query and fragment exactly as the backend wrote them (Uri would re-escape them).
        int authorityStart = url.IndexOf("//", StringComparison.Ordinal) + 2;
        int pathStart = url.AsSpan(authorityStart).IndexOfAny('/', '?', '#');
        string rest = pathStart < 0 ? "/" : url[(authorityStart + pathStart)..];
        if (rest[0] != '/')
        {
            rest = "/" + rest; // http://backend?x=1 names the root
        }

        string path = IsUnderPrefix(rest, publicBase.Prefix) ? rest : publicBase.Prefix + rest;
        return publicBase.Origin is { } origin ? origin + path : path;
    }

    private bool IsBackendOrigin(Uri url) =>
        url.Scheme.Equals(_backend.Scheme, StringComparison.OrdinalIgnoreCase)
        && url.IdnHost.Equals(_backend.IdnHost, StringComparison.OrdinalIgnoreCase)
        && url.Port == _backend.Port;

    /// <summary>
    /// The caller's own host (<c>--host-header preserve</c> hands the backend the caller's Host, so it builds absolute
    /// URLs on it), over http or https: the backend cannot know which scheme the caller used.
    /// </summary>
    private static bool IsPublicHost(Uri url, string? publicHost) =>
        publicHost is { Length: > 0 }
        && (url.Scheme == Uri.UriSchemeHttp || url.Scheme == Uri.UriSchemeHttps)
        && url.Authority.Equals(publicHost, StringComparison.OrdinalIgnoreCase);

    /// <summary><c>5; url=/next</c>: the URL after <c>url=</c> (quoted or not) is rewritten as a Location is.</summary>
    private string? RewriteRefresh(string refresh, PublicBase publicBase)
    {
        int url = refresh.IndexOf("url=", StringComparison.OrdinalIgnoreCase);
        if (url < 0)
        {
            return null;
        }

        int start = url + 4;
        char quote = start < refresh.Length && refresh[start] is '\'' or '"' ? refresh[start] : '\0';
        int valueStart = quote == '\0' ? start : start + 1;
        int valueEnd = quote == '\0' ? refresh.Length : refresh.IndexOf(quote, valueStart);
        if (valueEnd < 0)
        {
            valueEnd = refresh.Length;
        }

        string? rewritten = RewriteUrl(refresh[valueStart..valueEnd].Trim(), publicBase);
        return rewritten is null ? null : string.Concat(refresh.AsSpan(0, valueStart), rewritten, refresh.AsSpan(valueEnd));
    }

    /// <summary><c>Path=/x</c> becomes <c>Path=/session/{id}/x</c>; a cookie without a Path already defaults under the prefix.</summary>
    private static string? RewriteCookiePath(string setCookie, string prefix)
    {
        if (prefix.Length == 0)
        {
            return null;
        }

        for (int attribute = setCookie.IndexOf(';'); attribute >= 0; attribute = setCookie.IndexOf(';', attribute + 1))
        {
            int end = setCookie.IndexOf(';', attribute + 1);
            end = end < 0 ? setCookie.Length : end;
            int equals = setCookie.IndexOf('=', attribute, end - attribute);
            if (equals < 0 || !setCookie.AsSpan(attribute + 1, equals - attribute - 1).Trim().Equals("Path", StringComparison.OrdinalIgnoreCase))
            {
                continue;
            }

            int valueStart = equals + 1;
            while (valueStart < end && setCookie[valueStart] == ' ')
            {
                valueStart++;
            }

            ReadOnlySpan<char> path = setCookie.AsSpan(valueStart, end - valueStart).TrimEnd();
            if (path.IsEmpty || path[0] != '/' || IsUnderPrefix(path, prefix))
            {
                return null;
            }

            return string.Concat(setCookie.AsSpan(0, valueStart), prefix, setCookie.AsSpan(valueStart));
        }

        return null;
    }

    /// <summary>Whether <paramref name="path"/> already names the prefix (an app that honours X-Forwarded-Prefix itself).</summary>
    private static bool IsUnderPrefix(ReadOnlySpan<char> path, string prefix) =>
        path.StartsWith(prefix, StringComparison.Ordinal) && (path.Length == prefix.Length || path[prefix.Length] is '/' or '?' or '#');

    /// <summary>Where the caller reached the backend: the prefix stripped and, when known, the public origin.</summary>
    private sealed record PublicBase(string Prefix, string? Origin, string? Host)
    {
        public static PublicBase Of(RequestHead request)
        {
            string prefix = string.Empty;
            string? proto = null;
            string? host = null;
            foreach (HeaderField field in request.Headers)
            {
                if (field.Name.Equals("X-Forwarded-Prefix", StringComparison.OrdinalIgnoreCase))
                {
                    prefix = field.Value.TrimEnd('/');
                }
                else if (field.Name.Equals("X-Forwarded-Proto", StringComparison.OrdinalIgnoreCase))
                {
                    proto = field.Value;
                }
                else if (field.Name.Equals("X-Forwarded-Host", StringComparison.OrdinalIgnoreCase))
                {
                    host = field.Value;
                }
            }

            return new PublicBase(prefix, proto is { Length: > 0 } && host is { Length: > 0 } ? $"{proto}://{host}" : null, host);
        }
    }
}
