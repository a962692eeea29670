namespace Tunnel2.Protocol.Multiplexing;

/// <summary>An encoded request or response head does not fit in one frame.</summary>
public sealed class HeadTooLargeException : Exception
{
    public HeadTooLargeException(int size, int limit)
        : base($"Encoded head of {size} bytes exceeds the frame limit of {limit} bytes.")
    {
    }

    public HeadTooLargeException()
    {
    }

    public HeadTooLargeException(string message) : base(message)
    {
    }

    public HeadTooLargeException(string message, Exception innerException) : base(message, innerException)
    {
    }
}
