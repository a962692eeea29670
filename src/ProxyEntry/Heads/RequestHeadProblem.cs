namespace Tunnel2.ProxyEntry.Heads;

/// <summary>Why a request's head must not cross the tunnel (RFC 9110 §5.1 and §5.6.2, RFC 9112 §6.1 and §6.3).</summary>
public enum RequestHeadProblem
{
    None,

    /// <summary>A header name with a byte outside RFC 9110's token characters (controls, white space, separators, non-ASCII).</summary>
    InvalidHeaderName,

    /// <summary>Content-Length and Transfer-Encoding together: two framings for one body, the shape of request smuggling.</summary>
    ContentLengthWithTransferEncoding,

    /// <summary>A transfer coding other than <c>chunked</c> (gzip, deflate, …): the tunnel cannot undo it, so it is not forwarded as if plain.</summary>
    UnsupportedTransferCoding,

    /// <summary>Transfer-Encoding that names <c>chunked</c> more than once or not at all.</summary>
    InvalidTransferEncoding,
}
