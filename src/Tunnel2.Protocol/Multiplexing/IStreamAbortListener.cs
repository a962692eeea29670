namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Told once when a stream is reset or its uplink dies (see <see cref="IStreamHandle.SetAbortListener"/>): what the
/// relay on the other side of the stream does to stop its own I/O, without a <see cref="CancellationTokenSource"/>
/// per request. Called on whichever thread fails the stream: must not block.
/// </summary>
public interface IStreamAbortListener
{
    void OnStreamAborted();
}
