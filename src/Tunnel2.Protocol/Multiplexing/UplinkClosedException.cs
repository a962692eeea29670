namespace Tunnel2.Protocol.Multiplexing;

/// <summary>The uplink carrying a stream is gone (peer vanished, protocol error, shutdown).</summary>
public sealed class UplinkClosedException : IOException
{
    public UplinkClosedException(string message) : base(message)
    {
    }

    public UplinkClosedException(string message, Exception innerException) : base(message, innerException)
    {
    }

    public UplinkClosedException()
    {
    }
}
