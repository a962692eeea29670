using System.Collections.Concurrent;
using System.Security.Cryptography;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelServer.Diagnostics;

namespace Tunnel2.TunnelServer.Security;

/// <summary>
/// Revocation: when the credentials file changes, every live uplink whose token is gone from it (its entry removed, or
/// given another token) or may no longer serve its session is drained (GoAway; requests in flight get
/// <see cref="DrainGrace"/> to finish) and closed. The client's next login then meets the new file. Uplinks that logged in
/// with the single <c>--token</c> are not the file's to revoke.
/// </summary>
public sealed class CredentialRevocation : IDisposable
{
    public static readonly TimeSpan DrainGrace = TimeSpan.FromSeconds(5);

    private readonly ConcurrentDictionary<Uplink, (string Session, ClientCredential Credential)> _logins = new();
    private readonly CredentialsFile? _file;
    private readonly ILogger<CredentialRevocation> _logger;

    public CredentialRevocation(ILogger<CredentialRevocation> logger, CredentialsFile? file = null)
    {
        _logger = logger;
        _file = file;
        if (_file is not null)
        {
            _file.Reloaded += Revoke;
        }
    }

    public void LoggedIn(Uplink uplink, string session, ClientCredential? credential)
    {
        if (_file is not null && credential is not null && credential.Name != ClientAuthenticator.SharedTokenName)
        {
            _logins[uplink] = (session, credential);
        }
    }

    public void LoggedOut(Uplink uplink) => _logins.TryRemove(uplink, out _);

    public void Dispose()
    {
        if (_file is not null)
        {
            _file.Reloaded -= Revoke;
        }
    }

    private void Revoke(Credentials credentials)
    {
        foreach (KeyValuePair<Uplink, (string Session, ClientCredential Credential)> login in _logins)
        {
            (string session, ClientCredential credential) = login.Value;
            if (!StillValid(credentials, credential, session) && _logins.TryRemove(login.Key, out _))
            {
                TunnelServerLog.LoginRevoked(_logger, login.Key.Name, credential.Name, session);
                _ = login.Key.DrainAsync(DrainGrace);
            }
        }
    }

    private static bool StillValid(Credentials credentials, ClientCredential credential, string session)
    {
        foreach (ClientCredential current in credentials.Clients)
        {
            if (current.Name == credential.Name)
            {
                return CryptographicOperations.FixedTimeEquals(current.TokenHash, credential.TokenHash) && current.MayServe(session);
            }
        }

        return false;
    }
}
