using Microsoft.AspNetCore.Http;
using Microsoft.Net.Http.Headers;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.ProxyEntry.Heads;

/// <summary>
/// Applies the backend's status and end-to-end headers to the caller's response; repeats (Set-Cookie) stay separate.
/// A 101 keeps its <c>Upgrade</c> field, which names the protocol switched to; Kestrel writes <c>Connection: Upgrade</c>.
/// To an HTTP/2 extended CONNECT (RFC 8441) the same 101 is a 200, without the HTTP/1.1 handshake's fields.
/// </summary>
public static class ResponseHeadWriter
{
    public static void Apply(ResponseHead head, HttpResponse response, bool extendedConnect = false)
    {
        bool switching = head.StatusCode == StatusCodes.Status101SwitchingProtocols;
        bool acceptConnect = switching && extendedConnect;
        response.StatusCode = acceptConnect ? StatusCodes.Status200OK : head.StatusCode;
        IHeaderDictionary headers = response.Headers;
        foreach (HeaderField field in head.Headers)
        {
            if (HopByHopHeaders.Contains(field.Name)
                && !(switching && !acceptConnect && field.Name.Equals(HeaderNames.Upgrade, StringComparison.OrdinalIgnoreCase)))
            {
                continue;
            }

            if (acceptConnect && field.Name.Equals(HeaderNames.SecWebSocketAccept, StringComparison.OrdinalIgnoreCase))
            {
                continue;
            }

            headers.Append(field.Name, field.Value);
        }
    }
}
