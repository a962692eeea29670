using Microsoft.AspNetCore.Http;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>Applies the backend's status and end-to-end headers to the caller's response; repeats (Set-Cookie) stay separate.</summary>
public static class ResponseHeadWriter
{
    public static void Apply(ResponseHead head, HttpResponse response)
    {
        response.StatusCode = head.StatusCode;
        IHeaderDictionary headers = response.Headers;
        foreach (HeaderField field in head.Headers)
        {
            if (HopByHopHeaders.Contains(field.Name))
            {
                continue;
            }

            headers.Append(field.Name, field.Value);
        }
    }
}
