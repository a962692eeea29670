namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Sees a body's bytes as they pass (the client's request inspector keeps the first of them). Called on the copy loop,
/// synchronously, with bytes that are only valid during the call: an observer copies what it keeps and never blocks.
/// </summary>
public interface IBodyTap
{
    void Observe(ReadOnlySpan<byte> bytes);
}
