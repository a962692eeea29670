namespace Tunnel2.Protocol.Heads;

/// <summary>What the backend must be asked: method, origin-form target (path and query, still encoded) and headers.</summary>
public sealed class RequestHead
{
    private bool? _isUpgrade;

    /// <param name="isUpgrade">Whether it asks to switch protocols, when the maker knows; otherwise read from the headers once.</param>
    public RequestHead(string method, string target, List<HeaderField> headers, bool? isUpgrade = null)
    {
        Method = method;
        Target = target;
        Headers = headers;
        _isUpgrade = isUpgrade;
    }

    public string Method { get; }

    /// <summary>Path and query exactly as they must reach the backend, e.g. <c>/loadtest/get?x=%20</c>.</summary>
    public string Target { get; }

    public List<HeaderField> Headers { get; }

    /// <summary>
    /// Whether this is an upgrade request (protocol version 3): the one hop-by-hop field a head may carry is
    /// <c>Upgrade</c>, and only on a request that asks to switch protocols (docs/protocol.md §3).
    /// </summary>
    public bool IsUpgrade => _isUpgrade ??= HasUpgradeField(Headers);

    private static bool HasUpgradeField(List<HeaderField> headers)
    {
        foreach (HeaderField header in headers)
        {
            if (header.Name.Equals("Upgrade", StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        return false;
    }
}
