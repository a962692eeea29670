using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>The size of a request's header block as it came in: <c>name: value\r\n</c> per field value.</summary>
public static class RequestHeaderSize
{
    public static long Of(IHeaderDictionary headers)
    {
        long total = 0;
        foreach (KeyValuePair<string, StringValues> header in headers)
        {
            foreach (string? value in header.Value)
            {
                total += header.Key.Length + (value?.Length ?? 0) + 4;
            }
        }

        return total;
    }
}
