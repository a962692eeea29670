namespace Tunnel2.Protocol.Heads;

/// <summary>The backend's status code and response headers (content headers included).</summary>
public sealed class ResponseHead
{
    public ResponseHead(int statusCode, List<HeaderField> headers)
    {
        StatusCode = statusCode;
        Headers = headers;
    }

    public int StatusCode { get; }

    public List<HeaderField> Headers { get; }
}
