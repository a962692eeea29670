using Microsoft.AspNetCore.Http;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// Applies the backend's status and end-to-end headers to the caller's response; repeats (Set-Cookie) stay separate.
/// A 101 keeps its <c>Upgrade</c> field, which names the protocol switched to; Kestrel writes <c>Connection: Upgrade</c>.
/// </summary>
public static class ResponseHeadWriter
{
    public static void Apply(ResponseHead head, HttpResponse response)
    {
        response.StatusCode = head.StatusCode;
        IHeaderDictionary headers = response.Headers;
        bool switching = head.StatusCode == StatusCodes.Status101SwitchingProtocols;
        foreach (HeaderField field in head.Headers)
        {
            if (HopByHopHeaders.Contains(field.Name) && !(switching && field.Name.Equals("Upgrade", StringComparison.OrdinalIgnoreCase)))
            {
                continue;
            }

            headers.Append(field.Name, field.Value);
        }
    }
}
