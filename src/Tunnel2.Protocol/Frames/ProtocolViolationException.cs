namespace Tunnel2.Protocol.Frames;

/// <summary>The peer broke the frame protocol; the uplink that received the bytes is closed.</summary>
public sealed class ProtocolViolationException : Exception
{
    public ProtocolViolationException(string message) : base(message)
    {
    }

    public ProtocolViolationException(string message, Exception innerException) : base(message, innerException)
    {
    }

    public ProtocolViolationException()
    {
    }
}
