using System.Collections.Concurrent;
using System.Net;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.TunnelServer.Configuration;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// Limits what one source address may do on the tunnel port: failed logins (<see cref="FailedAttempts"/> of
/// <c>TunnelServer:MaxFailedLoginsPerMinute</c>; once used up every login from that address gets 429 with Retry-After
/// until a count refills, right token or not) and uplinks open at once (<c>TunnelServer:MaxUplinksPerAddress</c>).
/// </summary>
public sealed class LoginGuard : IDisposable
{
    private readonly FailedAttempts _failures;
    private readonly ConcurrentDictionary<IPAddress, int> _uplinks = new();
    private readonly int _maxUplinks;

    public LoginGuard(IOptions<TunnelServerOptions> options)
    {
        _failures = new FailedAttempts(options.Value.MaxFailedLoginsPerMinute);
        _maxUplinks = options.Value.MaxUplinksPerAddress;
    }

    /// <summary>
    /// Judges one login from <paramref name="address"/> in one step: refused (<see cref="AttemptVerdict.Blocked"/>,
    /// whatever its token) while the address has no failed login left, else counted when <paramref name="failed"/>.
    /// </summary>
    public AttemptVerdict Judge(IPAddress address, bool failed, out TimeSpan retryAfter) => _failures.Decide(address, failed, out retryAfter);

    /// <summary>Counts an uplink from <paramref name="address"/>; false (nothing counted) when it already has the most allowed.</summary>
    public bool TryAddUplink(IPAddress address)
    {
        while (true)
        {
            int current = _uplinks.GetOrAdd(address, 0);
            if (current >= _maxUplinks)
            {
                return false;
            }

            if (_uplinks.TryUpdate(address, current + 1, current))
            {
                return true;
            }
        }
    }

    public void RemoveUplink(IPAddress address)
    {
        while (_uplinks.TryGetValue(address, out int current))
        {
            if (current <= 1 ? _uplinks.TryRemove(new KeyValuePair<IPAddress, int>(address, current)) : _uplinks.TryUpdate(address, current - 1, current))
            {
                return;
            }
        }
    }

    public void Dispose() => _failures.Dispose();
}
