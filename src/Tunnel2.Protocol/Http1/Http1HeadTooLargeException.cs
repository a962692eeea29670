namespace Tunnel2.Protocol.Http1;

/// <summary>An HTTP head longer than the reader allows.</summary>
public sealed class Http1HeadTooLargeException(int limit)
    : Exception($"The HTTP head exceeds {limit} bytes.")
{
    public int Limit { get; } = limit;
}
