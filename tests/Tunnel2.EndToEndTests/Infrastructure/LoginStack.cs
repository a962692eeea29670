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
    private readonly string[] _serverArgs;

    private LoginStack(string credentials, string keys, string[] serverArgs, ProcessStack stack)
    {
        _credentials = credentials;
        _keys = keys;
        _serverArgs = serverArgs;
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
            serverArgs = [$"--TunnelServer:CredentialsFile={credentials}", .. serverArgs];
            ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
            {
                ServerArgs = serverArgs,
                ProbeHeaders = new Dictionary<string, string> { ["Cookie"] = probe },
            });
            return new LoginStack(credentials, keys, serverArgs, stack);
        }
        catch
        {
            File.Delete(credentials);
            Directory.Delete(keys, recursive: true);
            throw;
        }
    }

    /// <summary>
    /// Another node of the same cluster: a TunnelServer with this one's credentials file and keys directory (and
    /// <paramref name="args"/>), and a TunnelClient serving the session through it from the same backend. The caller
    /// waits until it serves, in its own way (a host name, TLS).
    /// </summary>
    /// <param name="publicUrl">The node's public listener, such as <c>https://127.0.0.1:0</c>.</param>
    public async Task<LoginNode> StartNodeAsync(string name, string publicUrl, params string[] args)
    {
        TunnelProcess server = TunnelProcess.StartServer("server-" + name,
            ["--public-url", publicUrl, "--tunnel-url", "http://127.0.0.1:0", "--token", TunnelStack.Token, .. args, .. _serverArgs]);
        try
        {
            (Uri publicAt, Uri tunnelAt) = await server.WaitForServerUrlsAsync();
            TunnelProcess client = TunnelProcess.StartClient("client-" + name, ["--server", tunnelAt.ToString().TrimEnd('/'), "--session", Session,
                "--token", TunnelStack.Token, "--backend", Stack.BackendUrl.ToString().TrimEnd('/')]);
            return new LoginNode(server, client, publicAt);
        }
        catch
        {
            await server.DisposeAsync();
            throw;
        }
    }

    /// <summary>A login cookie for <paramref name="email"/> as a node sharing the keys would set it (<c>tunnel2-login=…</c>).</summary>
    public string Cookie(string email, TimeSpan lifetime) => Cookie(_keys, Session, email, lifetime);

    /// <summary>A login cookie for <paramref name="email"/> made with <paramref name="keys"/>, such as keys no node has.</summary>
    public string Cookie(IDataProtectionProvider keys, string email, TimeSpan lifetime) => OidcProvider.LoginCookie(keys, Session, email, lifetime);

    public async ValueTask DisposeAsync()
    {
        await Stack.DisposeAsync();
        File.Delete(_credentials);
        Directory.Delete(_keys, recursive: true);
    }

    private static string Cookie(string keys, string session, string email, TimeSpan lifetime) => OidcProvider.LoginCookie(
        DataProtectionProvider.Create(new DirectoryInfo(keys), ring => ring.SetApplicationName(OidcRule.KeysApplication)), session, email, lifetime);
}
