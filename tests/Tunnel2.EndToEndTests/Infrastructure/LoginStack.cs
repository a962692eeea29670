using Microsoft.AspNetCore.DataProtection;
using Tunnel2.ProxyEntry.Access;
using static Tunnel2.EndToEndTests.Access.CredentialsFileTests;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A session behind a company login, as deployed: TunnelServer and TunnelClient processes (and the test backend), a
/// credentials file whose <c>Oidc</c> entry names an Authority and takes accounts of example.com, and
/// a keys directory the test shares with the server (as the nodes of a cluster do), so it can make login cookies.
/// </summary>
public sealed class LoginStack : IAsyncDisposable
{
    private readonly string _credentials;
    private readonly string _keys;

    private LoginStack(string credentials, string keys, ProcessStack stack)
    {
        _credentials = credentials;
        _keys = keys;
        Stack = stack;
    }

    public ProcessStack Stack { get; }

    public string Session => Stack.Session;

    /// <param name="authority">The entry's Authority: the provider's issuer, or whatever stands in its place.</param>
    /// <param name="serverArgs">More of the server's arguments (trusted proxies, limits).</param>
    public static async Task<LoginStack> StartAsync(string authority, string[] serverArgs)
    {
        string session = "login-" + Guid.NewGuid().ToString("N")[..8];
        string credentials = Path.Combine(Path.GetTempPath(), $"tunnel2-login-{Guid.NewGuid():N}.json");
        string keys = Path.Combine(Path.GetTempPath(), $"tunnel2-login-keys-{Guid.NewGuid():N}");
        Directory.CreateDirectory(keys);
        string probe = Cookie(keys, session, "probe@example.com", TimeSpan.FromHours(1)); // makes the key ring the server then reads
        await File.WriteAllTextAsync(credentials, CredentialsJson([], [
            $$"""
            { "Sessions": "{{session}}", "Oidc": { "Authority": "{{authority}}", "ClientId": "{{OidcProvider.ClientId}}",
              "ClientSecret": "{{OidcProvider.ClientSecret}}", "AllowedEmailDomains": [ "example.com" ], "KeysDirectory": "{{keys}}" } }
            """,
        ]));
        try
        {
            ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
            {
                ServerArgs = [$"--TunnelServer:CredentialsFile={credentials}", .. serverArgs],
                ProbeHeaders = new Dictionary<string, string> { ["Cookie"] = probe },
            });
            return new LoginStack(credentials, keys, stack);
        }
        catch
        {
            File.Delete(credentials);
            Directory.Delete(keys, recursive: true);
            throw;
        }
    }

    /// <summary>A login cookie for <paramref name="email"/> as a node sharing the keys would set it (<c>tunnel2-login=…</c>).</summary>
    public string Cookie(string email, TimeSpan lifetime) => Cookie(_keys, Session, email, lifetime);

    public async ValueTask DisposeAsync()
    {
        await Stack.DisposeAsync();
        File.Delete(_credentials);
        Directory.Delete(_keys, recursive: true);
    }

    private static string Cookie(string keys, string session, string email, TimeSpan lifetime) => OidcProvider.LoginCookie(
        DataProtectionProvider.Create(new DirectoryInfo(keys), ring => ring.SetApplicationName(OidcRule.KeysApplication)), session, email, lifetime);
}
