using System.Diagnostics.CodeAnalysis;

namespace Tunnel2.Hosting;

/// <summary>The one check of "an absolute http:// or https:// URL" that listen addresses, servers and backends share.</summary>
public static class HttpUrl
{
    public static bool TryParse(string? text, [NotNullWhen(true)] out Uri? url) =>
        Uri.TryCreate(text, UriKind.Absolute, out url) && (url.Scheme == Uri.UriSchemeHttp || url.Scheme == Uri.UriSchemeHttps);
}
