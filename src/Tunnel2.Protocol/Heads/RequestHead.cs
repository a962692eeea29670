namespace Tunnel2.Protocol.Heads;

/// <summary>What the backend must be asked: method, origin-form target (path and query, still encoded) and headers.</summary>
public sealed class RequestHead
{
    public RequestHead(string method, string target, List<HeaderField> headers)
    {
        Method = method;
        Target = target;
        Headers = headers;
    }

    public string Method { get; }

    /// <summary>Path and query exactly as they must reach the backend, e.g. <c>/loadtest/get?x=%20</c>.</summary>
    public string Target { get; }

    public List<HeaderField> Headers { get; }

    /// <summary>
    /// Whether this is an upgrade request (protocol version 3): the one hop-by-hop field a head may carry is
    /// <c>Upgrade</c>, and only on a request that asks to switch protocols (docs/protocol.md §3).
    /// </summary>
    public bool IsUpgrade
    {
        get
        {
            foreach (HeaderField header in Headers)
            {
                if (header.Name.Equals("Upgrade", StringComparison.OrdinalIgnoreCase))
                {
                    return true;
                }
            }

            return false;
        }
    }
}
