using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>An abort listener that counts how often it was told.</summary>
internal sealed class CountingAbortListener : IStreamAbortListener
{
    private int _count;

    public int Count => Volatile.Read(ref _count);

    public void OnStreamAborted() => Interlocked.Increment(ref _count);
}
