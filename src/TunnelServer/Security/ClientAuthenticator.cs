using System.Security.Cryptography;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.TunnelServer.Security;

/// <summary>
/// Who a login's bearer token belongs to: a client of the credentials file, or the single <c>TunnelServer:Token</c>
/// (development: it may serve any session). The presented token is hashed and compared with every known hash in
/// constant time, so neither the answer nor its timing tells how close a guess came.
/// </summary>
public sealed class ClientAuthenticator
{
    /// <summary>The name logs give the single <c>--token</c>.</summary>
    public const string SharedTokenName = "--token";

    private readonly ClientCredential? _shared;
    private readonly CredentialsFile? _file;

    public ClientAuthenticator(string? sharedToken, CredentialsFile? file)
    {
        _file = file;
        if (!string.IsNullOrEmpty(sharedToken))
        {
            _shared = new ClientCredential(SharedTokenName, TokenHash.Of(sharedToken), [SessionPattern.Any]);
        }
    }

    /// <returns>The credential the token is, or null (a wrong or missing token).</returns>
    public ClientCredential? Authenticate(ReadOnlySpan<char> token)
    {
        if (token.IsEmpty)
        {
            return null;
        }

        byte[] presented = TokenHash.Of(token);
        ClientCredential? found = null;
        foreach (ClientCredential client in _file?.Current.Clients ?? [])
        {
            // Every entry is compared, with no early exit: the time taken says nothing about which came close.
            if (CryptographicOperations.FixedTimeEquals(presented, client.TokenHash))
            {
                found ??= client;
            }
        }

        if (_shared is not null && CryptographicOperations.FixedTimeEquals(presented, _shared.TokenHash))
        {
            found ??= _shared;
        }

        return found;
    }
}
