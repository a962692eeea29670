namespace Tunnel2.Loops.Guard;

/// <summary>A blocking call (DNS, connect, a TLS handshake, logging) was made on an event loop's thread, where it would
/// stall every connection of the loop. A programming error: hand the call to the thread pool and post the result back.</summary>
public sealed class BlockingCallOnLoopException : InvalidOperationException
{
    public BlockingCallOnLoopException()
    {
    }

    public BlockingCallOnLoopException(string message)
        : base(message)
    {
    }

    public BlockingCallOnLoopException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
