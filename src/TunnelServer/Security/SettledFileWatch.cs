using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Primitives;

namespace Tunnel2.TunnelServer.Security;

/// <summary>
/// Calls back once files have changed and then stayed still for a moment. Tools write a file in several steps (and a
/// certificate and its key in two files); reading in between would see half of a change.
/// </summary>
public sealed class SettledFileWatch : IDisposable
{
    public static readonly TimeSpan DefaultSettleTime = TimeSpan.FromMilliseconds(300);

    private readonly List<IDisposable> _watches = [];
    private readonly ITimer _settle;
    private readonly TimeSpan _settleTime;

    public SettledFileWatch(IEnumerable<string> paths, Action onSettled, TimeProvider? time = null, TimeSpan? settleTime = null)
    {
        _settleTime = settleTime ?? DefaultSettleTime;
        _settle = (time ?? TimeProvider.System).CreateTimer(static state => ((Action)state!)(), onSettled, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        foreach (string path in paths.Distinct(StringComparer.Ordinal))
        {
            var files = new PhysicalFileProvider(Path.GetDirectoryName(path)!);
            _watches.Add(files);
            _watches.Add(ChangeToken.OnChange(() => files.Watch(Path.GetFileName(path)), static state => state.Changed(), this));
        }
    }

    public void Dispose()
    {
        _settle.Dispose();
        foreach (IDisposable watch in _watches)
        {
            watch.Dispose();
        }
    }

    private void Changed() => _settle.Change(_settleTime, Timeout.InfiniteTimeSpan);
}
