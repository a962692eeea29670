namespace Tunnel2.Protocol.Multiplexing;

/// <summary>The uplink already carries as many streams as the peer accepts (<c>Tunnel2-Max-Streams</c>); try another or later.</summary>
public sealed class StreamLimitException : IOException
{
    public StreamLimitException(int limit)
        : base($"The uplink already carries its limit of {limit} concurrent streams.")
    {
        Limit = limit;
    }

    public StreamLimitException(string message) : base(message)
    {
    }

    public StreamLimitException(string message, Exception innerException) : base(message, innerException)
    {
    }

    public StreamLimitException()
    {
    }

    public int Limit { get; }
}
