using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>The peer (or this end) reset the stream; <see cref="ErrorCode"/> says why.</summary>
public sealed class StreamResetException : IOException
{
    public StreamResetException(ProtocolErrorCode errorCode)
        : base($"Stream reset: {errorCode}.")
    {
        ErrorCode = errorCode;
    }

    public StreamResetException(string message) : base(message)
    {
        ErrorCode = ProtocolErrorCode.InternalError;
    }

    public StreamResetException(string message, Exception innerException) : base(message, innerException)
    {
        ErrorCode = ProtocolErrorCode.InternalError;
    }

    public StreamResetException()
    {
        ErrorCode = ProtocolErrorCode.InternalError;
    }

    public ProtocolErrorCode ErrorCode { get; }
}
