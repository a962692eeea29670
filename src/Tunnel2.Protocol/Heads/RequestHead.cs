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
}
