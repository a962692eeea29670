using Tunnel2.Hosting;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Diagnostics;

namespace Tunnel2.TunnelServer.Security;

/// <summary>
/// The credentials file (<c>TunnelServer:CredentialsFile</c>), read at start and again whenever it changes: new tokens
/// and visitor rules apply to the next login and the next request, without a restart. A change that does not parse
/// keeps the credentials in force and logs why. Uplinks already logged in stay up when their token is removed (as an
/// SSH session outlives its key); docs/security.md says how to rotate.
/// </summary>
public sealed class CredentialsFile : IDisposable
{
    private readonly string _path;
    private readonly SessionPolicies _policies;
    private readonly ILogger<CredentialsFile> _logger;
    private readonly SettledFileWatch _watch;
    private volatile Credentials _current;

    /// <exception cref="InvalidConfigurationException">The file is missing or wrong; the message says what to fix.</exception>
    public CredentialsFile(string path, SessionPolicies policies, ILogger<CredentialsFile> logger, TimeProvider? time = null)
    {
        _path = Path.GetFullPath(path);
        _policies = policies;
        _logger = logger;
        _current = Read(_path);
        _policies.UseFileRules(_current.Visitors);
        _watch = new SettledFileWatch([_path], Reload, time);
        TunnelServerLog.CredentialsLoaded(_logger, _path, _current.Clients.Count, _current.Visitors.Count);
    }

    public Credentials Current => _current;

    /// <summary>Raised after a change was read and applied (not after one that failed).</summary>
    public event Action<Credentials>? Reloaded;

    /// <exception cref="InvalidConfigurationException">The file is missing, unreadable or wrong.</exception>
    public static Credentials Read(string path)
    {
        try
        {
            using FileStream file = File.OpenRead(path);
            return Credentials.Parse(file);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or InvalidDataException)
        {
            throw new InvalidConfigurationException($"The credentials file '{path}' cannot be used: {ex.Message}");
        }
    }

    public void Dispose() => _watch.Dispose();

    private void Reload()
    {
        try
        {
            Credentials loaded = Read(_path);
            _current = loaded;
            _policies.UseFileRules(loaded.Visitors); // every session's policy rebuilt, swapped whole
            TunnelServerLog.CredentialsReloaded(_logger, _path, loaded.Clients.Count, loaded.Visitors.Count);
            Reloaded?.Invoke(loaded);
        }
        catch (InvalidConfigurationException ex)
        {
            TunnelServerLog.CredentialsReloadFailed(_logger, _path, ex.Message);
        }
    }
}
