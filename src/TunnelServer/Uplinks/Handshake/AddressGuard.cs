using System.Collections.Concurrent;
using System.Globalization;
using System.Net;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.TunnelServer.Uplinks.Handshake;

/// <summary>
/// Limits what one source address may do on the tunnel port: failed logins (<see cref="FailedAttempts"/> of
/// <c>TunnelServer:Limits:MaxFailedLoginsPerMinute</c>; once used up every login from that address gets 429 with Retry-After
/// until a count refills, right token or not) and uplinks open at once (<c>TunnelServer:Limits:MaxUplinksPerAddress</c>).
/// </summary>
/// <param name="failures">The failed-login counts; the guard owns and disposes them.</param>
public sealed class AddressGuard(FailedAttempts failures, int maxUplinks) : IDisposable
{
    private readonly ConcurrentDictionary<IPAddress, int> _uplinks = new();

    /// <summary>
    /// The login's answer with this address's limits applied, in one step: an address out of failed logins is refused
    /// whatever its token, else a refused token (401, 403) is counted against it; an accepted login must fit under the
    /// address's uplink cap and is counted (<see cref="RemoveUplink"/> when the uplink ends).
    /// </summary>
    /// <param name="decided">The handshake's decision on the head alone (<see cref="LoginDecision"/>).</param>
    public (HandshakeAcceptance? Accepted, HandshakeRefusal? Refused) Admit(
        IPAddress address, (HandshakeAcceptance? Accepted, HandshakeRefusal? Refused) decided)
    {
        bool failed = decided.Refused is { Status: StatusCodes.Status401Unauthorized or StatusCodes.Status403Forbidden };
        if (Judge(address, failed, out TimeSpan retryAfter) == AttemptVerdict.Blocked)
        {
            return (null, TooMany("too-many-failed-logins", "Too many failed logins",
                "This address sent too many wrong or missing tokens; try again later (TunnelServer:Limits:MaxFailedLoginsPerMinute).", retryAfter));
        }

        if (decided.Accepted is not null && !TryAddUplink(address))
        {
            return (null, TooMany("too-many-uplinks", "Too many uplinks",
                "This address holds as many uplinks as it may (TunnelServer:Limits:MaxUplinksPerAddress).", TimeSpan.FromSeconds(5)));
        }

        return decided;
    }

    /// <summary>
    /// Judges one login from <paramref name="address"/> in one step: refused (<see cref="AttemptVerdict.Blocked"/>,
    /// whatever its token) while the address has no failed login left, else counted when <paramref name="failed"/>.
    /// </summary>
    public AttemptVerdict Judge(IPAddress address, bool failed, out TimeSpan retryAfter) => failures.Decide(address, failed, out retryAfter);

    /// <summary>Counts an uplink from <paramref name="address"/>; false (nothing counted) when it already has the most allowed.</summary>
    public bool TryAddUplink(IPAddress address)
    {
        while (true)
        {
            int current = _uplinks.GetOrAdd(address, 0);
            if (current >= maxUplinks)
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

    public void Dispose() => failures.Dispose();

    private static HandshakeRefusal TooMany(string reason, string title, string detail, TimeSpan retryAfter) =>
        new(StatusCodes.Status429TooManyRequests, reason, title, detail,
            new KeyValuePair<string, string>("Retry-After", Math.Max(1, (int)Math.Ceiling(retryAfter.TotalSeconds)).ToString(CultureInfo.InvariantCulture)));
}
