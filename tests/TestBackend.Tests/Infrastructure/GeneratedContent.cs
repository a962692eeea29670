using System.Net;

namespace Tunnel2.TestBackend.Tests.Infrastructure;

/// <summary>
/// A request body of <see cref="DeterministicBytes"/> produced while it is sent, 64 KiB at a time.
/// Optionally pauses once <c>pauseAt</c> bytes are sent until <c>resumeWhen</c> completes, which lets a
/// test prove that the server answers before it has the whole body.
/// </summary>
internal sealed class GeneratedContent : HttpContent
{
    private static readonly TimeSpan PauseLimit = TimeSpan.FromSeconds(20);

    private readonly long _length;
    private readonly bool _announceLength;
    private readonly long _pauseAt;
    private readonly Task? _resumeWhen;

    public GeneratedContent(long length, bool announceLength, long pauseAt = long.MaxValue, Task? resumeWhen = null)
    {
        _length = length;
        _announceLength = announceLength;
        _pauseAt = pauseAt;
        _resumeWhen = resumeWhen;
    }

    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
        SerializeToStreamAsync(stream, context, CancellationToken.None);

    protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
    {
        var buffer = new byte[64 * 1024];
        long sent = 0;
        var paused = false;
        while (sent < _length)
        {
            if (!paused && sent >= _pauseAt && _resumeWhen is not null)
            {
                paused = true;
                await _resumeWhen.WaitAsync(PauseLimit, cancellationToken);
            }

            var count = (int)Math.Min(buffer.Length, _length - sent);
            DeterministicBytes.Fill(sent, buffer.AsSpan(0, count));
            await stream.WriteAsync(buffer.AsMemory(0, count), cancellationToken);
            sent += count;
        }
    }

    /// <summary>False makes HttpClient send the body chunked, without Content-Length.</summary>
    protected override bool TryComputeLength(out long length)
    {
        length = _length;
        return _announceLength;
    }
}
