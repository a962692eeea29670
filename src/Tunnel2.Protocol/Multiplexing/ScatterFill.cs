namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Reads from a source into <paramref name="buffers"/> in order, without waiting (one scatter read): the bytes read,
/// 0 at the source's end, or a negative value when it has nothing now.
/// </summary>
public delegate int ScatterFill<in TState>(ReadOnlySpan<Memory<byte>> buffers, TState state);
