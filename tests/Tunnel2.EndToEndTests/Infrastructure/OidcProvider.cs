using System.Diagnostics;
using System.Security.Claims;
using System.Text;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.Playwright;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A real OpenID provider for one test: the npm package <c>oidc-provider</c> (tests/oidc-provider/provider.mjs), run
/// by Debian's <c>node</c> on a free loopback port, with its development login pages (any login name, any password;
/// the login name is the account's email). Its packages are installed from the npm registry into
/// tests/oidc-provider/node_modules (not in git) the first time, with <c>npm ci</c> from the lock file. Disposing
/// kills it by its process id.
/// </summary>
public sealed class OidcProvider : IAsyncDisposable
{
    public const string ClientId = "tunnel2";
    public const string ClientSecret = "tunnel2-test-client-secret";

    private static readonly SemaphoreSlim Install = new(1, 1);

    private readonly Process _process;
    private readonly StringBuilder _output;

    private OidcProvider(Process process, StringBuilder output, string issuer)
    {
        _process = process;
        _output = output;
        Issuer = issuer;
    }

    /// <summary>The provider's issuer URL, <c>http://127.0.0.1:port</c>.</summary>
    public string Issuer { get; }

    public string Output
    {
        get
        {
            lock (_output)
            {
                return _output.ToString();
            }
        }
    }

    public static async Task<OidcProvider> StartAsync()
    {
        string directory = FixtureDirectory();
        await InstallAsync(directory);
        var output = new StringBuilder();
        var issuer = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        Process process = Start(directory, output, ["provider.mjs", ClientId, ClientSecret], line =>
        {
            if (line.StartsWith("listening ", StringComparison.Ordinal))
            {
                issuer.TrySetResult(line["listening ".Length..].Trim());
            }
        });
        process.EnableRaisingEvents = true;
        process.Exited += (_, _) => issuer.TrySetException(new InvalidOperationException($"The OpenID provider exited:\n{Text(output)}"));
        try
        {
            return new OidcProvider(process, output, await issuer.Task.WaitAsync(TimeSpan.FromSeconds(30)));
        }
        catch
        {
            process.Kill(entireProcessTree: true);
            process.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Opens <paramref name="url"/>, signs in at the provider's pages as <paramref name="email"/>, consents, and returns
    /// the tunnel's answer it lands on. Each step waits for its page's element (Playwright's auto-wait), not for time.
    /// </summary>
    public async Task<IResponse?> LogInAsync(IPage page, string url, string email, Uri tunnelPublicUrl)
    {
        string tunnel = tunnelPublicUrl.ToString().TrimEnd('/');
        IResponse? landed = null;
        void Track(object? sender, IResponse response)
        {
            if (response.Request.IsNavigationRequest && response.Url.StartsWith(tunnel, StringComparison.Ordinal) && response.Status is < 300 or >= 400)
            {
                landed = response;
            }
        }

        page.Response += Track;
        await page.GotoAsync(url);
        Assert.StartsWith(Issuer, page.Url, StringComparison.Ordinal); // sent to the provider's login page
        await page.FillAsync("input[name=login]", email);
        await page.FillAsync("input[name=password]", "any-password");
        await page.ClickAsync("button[type=submit]");
        await page.ClickAsync("button[autofocus]"); // the consent page's Continue
        await page.WaitForURLAsync(address => address.StartsWith(tunnel, StringComparison.Ordinal));
        page.Response -= Track;
        return landed;
    }

    /// <summary>A login cookie of <paramref name="session"/> for <paramref name="email"/>, as a node sharing <paramref name="keys"/> would set it.</summary>
    public static string LoginCookie(IDataProtectionProvider keys, string session, string email, TimeSpan lifetime)
    {
        var identity = new ClaimsIdentity([new Claim("sub", email), new Claim("email", email), new Claim("email_verified", "true")], "oidc", "sub", null);
        DateTimeOffset now = DateTimeOffset.UtcNow;
        var properties = new AuthenticationProperties { IssuedUtc = now - TimeSpan.FromMinutes(lifetime < TimeSpan.Zero ? 60 : 0), ExpiresUtc = now + lifetime };
        var ticket = new AuthenticationTicket(new ClaimsPrincipal(identity), properties, OidcRule.SchemeName(session));
        return OidcRule.CookieName + "=" + OidcRule.TicketFormat(keys, session).Protect(ticket);
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
        }

        await _process.WaitForExitAsync();
        _process.Dispose();
    }

    private static string FixtureDirectory()
    {
        for (DirectoryInfo? at = new(AppContext.BaseDirectory); at is not null; at = at.Parent)
        {
            string candidate = Path.Combine(at.FullName, "tests", "oidc-provider");
            if (File.Exists(Path.Combine(candidate, "provider.mjs")))
            {
                return candidate;
            }
        }

        throw new InvalidOperationException($"tests/oidc-provider is not above {AppContext.BaseDirectory}.");
    }

    private static async Task InstallAsync(string directory)
    {
        if (!File.Exists("/usr/bin/node") || !File.Exists("/usr/bin/npm"))
        {
            throw new InvalidOperationException("The single sign-on tests need Debian's nodejs and npm: apt-get install nodejs npm (./test.sh installs them).");
        }

        await Install.WaitAsync();
        try
        {
            if (File.Exists(Path.Combine(directory, "node_modules", "oidc-provider", "package.json")))
            {
                return;
            }

            var output = new StringBuilder();
            using Process npm = Start(directory, output, ["/usr/bin/npm", "ci", "--no-audit", "--no-fund"], _ => { }, program: "/usr/bin/npm", skipFirst: true);
            using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(5));
            await npm.WaitForExitAsync(timeout.Token);
            npm.WaitForExit();
            if (npm.ExitCode != 0)
            {
                throw new InvalidOperationException($"npm ci in {directory} exited with {npm.ExitCode}:\n{Text(output)}");
            }
        }
        finally
        {
            Install.Release();
        }
    }

    private static Process Start(string directory, StringBuilder output, string[] arguments, Action<string> onLine, string program = "/usr/bin/node", bool skipFirst = false)
    {
        var start = new ProcessStartInfo(program)
        {
            WorkingDirectory = directory,
            // Its own stdin: node and npm make an inherited stdin non-blocking, and the test host, which reads the same
            // one, then fails with EAGAIN ("being used by another process") and aborts the run.
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in skipFirst ? arguments[1..] : arguments)
        {
            start.ArgumentList.Add(argument);
        }

        var process = new Process { StartInfo = start };
        void Keep(string? line)
        {
            if (line is null)
            {
                return;
            }

            lock (output)
            {
                output.AppendLine(line);
            }

            onLine(line);
        }

        process.OutputDataReceived += (_, e) => Keep(e.Data);
        process.ErrorDataReceived += (_, e) => Keep(e.Data);
        process.Start();
        process.StandardInput.Close();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    private static string Text(StringBuilder output)
    {
        lock (output)
        {
            return output.ToString();
        }
    }
}
