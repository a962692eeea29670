namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// When a stream last moved a byte either way, sampled by an idle sweep: the upgraded streams' timeout on the client and
/// the TCP callers' on the server. The sweep only reads the stream's byte counts; it never calls two samples at once.
/// </summary>
public sealed class StreamIdleWatch(IByteStream stream)
{
    private long _bytes = -1;
    private long _since;

    public IByteStream Stream => stream;

    /// <summary>True once no byte moved either way for <paramref name="timeoutMs"/> since an earlier sample saw one move.</summary>
    /// <param name="now">The sweep's clock (<see cref="Environment.TickCount64"/>).</param>
    public bool IsIdle(long now, long timeoutMs)
    {
        long bytes = stream.SentBytes + stream.ReceivedBytes;
        if (bytes != _bytes)
        {
            _bytes = bytes;
            _since = now;
            return false;
        }

        return now - _since >= timeoutMs;
    }
}
