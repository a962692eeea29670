using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Relay;

/// <summary>Translates between the tunnel's heads and <see cref="HttpRequestMessage"/>/<see cref="HttpResponseMessage"/>.</summary>
internal static class BackendMessages
{
    public static HttpRequestMessage CreateRequest(UplinkStream stream, RequestHead head, string backendBase, bool hasBody)
    {
        var request = new HttpRequestMessage(HttpMethod.Parse(head.Method), new Uri(backendBase + head.Target, UriKind.Absolute))
        {
            Version = System.Net.HttpVersion.Version11,
            VersionPolicy = HttpVersionPolicy.RequestVersionOrLower,
        };

        HttpContent? content = hasBody ? new TunnelRequestContent(stream) : null;
        request.Content = content;
        foreach (HeaderField field in head.Headers)
        {
            if (!request.Headers.TryAddWithoutValidation(field.Name, field.Value))
            {
                content?.Headers.TryAddWithoutValidation(field.Name, field.Value);
            }
        }

        return request;
    }

    public static ResponseHead CreateResponseHead(HttpResponseMessage response)
    {
        var headers = new List<HeaderField>(response.Headers.NonValidated.Count + response.Content.Headers.NonValidated.Count);
        foreach (KeyValuePair<string, System.Net.Http.Headers.HeaderStringValues> header in response.Headers.NonValidated)
        {
            if (IsConnectionSpecific(header.Key))
            {
                continue;
            }

            foreach (string value in header.Value)
            {
                headers.Add(new HeaderField(header.Key, value));
            }
        }

        foreach (KeyValuePair<string, System.Net.Http.Headers.HeaderStringValues> header in response.Content.Headers.NonValidated)
        {
            foreach (string value in header.Value)
            {
                headers.Add(new HeaderField(header.Key, value));
            }
        }

        return new ResponseHead((int)response.StatusCode, headers);
    }

    /// <summary>Whether the response can carry no body, so its head ends the stream.</summary>
    public static bool HasNoBody(RequestHead request, HttpResponseMessage response) =>
        request.Method == "HEAD"
        || response.StatusCode is System.Net.HttpStatusCode.NoContent or System.Net.HttpStatusCode.NotModified
        || (int)response.StatusCode < 200
        || response.Content.Headers.ContentLength == 0;

    private static bool IsConnectionSpecific(string name) =>
        name.Equals("Connection", StringComparison.OrdinalIgnoreCase)
        || name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase)
        || name.Equals("Keep-Alive", StringComparison.OrdinalIgnoreCase)
        || name.Equals("Upgrade", StringComparison.OrdinalIgnoreCase)
        || name.Equals("Proxy-Connection", StringComparison.OrdinalIgnoreCase);
}
