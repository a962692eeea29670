using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Inspection;

/// <summary>
/// Keeps the first bytes of one body as it passes (at most the inspector's body limit) and counts all of them. The
/// request body's copy may still run when the exchange is recorded (an answer that came before the whole upload), so
/// the bytes are taken under a lock and nothing is added once <see cref="Freeze"/> has run.
/// </summary>
public sealed class BodyCapture(int limit) : IBodyTap
{
    private readonly Lock _lock = new();
    private byte[] _buffer = [];
    private int _captured;
    private long _size;
    private bool _frozen;

    public void Observe(ReadOnlySpan<byte> bytes)
    {
        lock (_lock)
        {
            if (_frozen)
            {
                return;
            }

            _size += bytes.Length;
            int take = Math.Min(bytes.Length, limit - _captured);
            if (take <= 0)
            {
                return;
            }

            if (_captured + take > _buffer.Length)
            {
                Array.Resize(ref _buffer, Math.Min(limit, Math.Max(_captured + take, Math.Max(_buffer.Length * 2, 1024))));
            }

            bytes[..take].CopyTo(_buffer.AsSpan(_captured));
            _captured += take;
        }
    }

    /// <summary>What was seen, trimmed to size; null when no byte passed.</summary>
    public CapturedBody? Freeze()
    {
        lock (_lock)
        {
            _frozen = true;
            return _size == 0 ? null : new CapturedBody(_buffer.AsSpan(0, _captured).ToArray(), _size);
        }
    }
}

/// <summary>The first bytes of a body and its full size.</summary>
public sealed record CapturedBody(byte[] Bytes, long Size)
{
    public bool Truncated => Bytes.Length < Size;
}
