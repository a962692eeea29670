using System.Collections.Concurrent;
using System.Security.Claims;
using System.Text.Encodings.Web;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Authentication.OpenIdConnect;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// A company login in front of a session (OpenID Connect), run by ASP.NET Core's own handlers: the
/// <see cref="OpenIdConnectHandler"/> (authorization code flow with PKCE, state and nonce) and the
/// <see cref="CookieAuthenticationHandler"/> (the <see cref="LoginCookie"/>: signed, HttpOnly, scoped to the session's
/// path, or its host when the host names the session; Secure over https). A browser without the cookie is sent to the
/// provider; the callback (<c>…/.tunnel2/oidc/callback</c>, <see cref="OidcCallback"/>) checks the allow lists and sets
/// the cookie; <c>…/.tunnel2/oidc/logout</c> clears it. The cookie and the login's state are protected by ASP.NET Core
/// Data Protection: with <c>KeysDirectory</c> every node that reads the same directory takes every node's cookie;
/// without it each process has keys of its own. The handlers of each session are built once (<see cref="OidcDoor"/>).
/// </summary>
public sealed class OidcRule : IVisitorRule
{
    public const string CookieName = LoginCookie.Name;
    public const string CallbackPath = "/.tunnel2/oidc/callback";
    public const string LogoutPath = "/.tunnel2/oidc/logout";

    /// <summary>The Data Protection application name: nodes sharing the keys directory must agree on it.</summary>
    public const string KeysApplication = "Tunnel2";

    public static readonly VisitorRuleKind Kind = new("oidc",
        static (entry, where, problems) => OidcSettings.FromFile(entry, where, problems) is { } settings ? new OidcRule(settings) : null);

    private readonly ConcurrentDictionary<string, OidcDoor> _doors = new(StringComparer.Ordinal);
    private readonly IDataProtectionProvider _keys;

    public OidcRule(OidcSettings settings)
    {
        Settings = settings;
        _keys = settings.KeysDirectory is { } directory
            ? DataProtectionProvider.Create(new DirectoryInfo(directory), keys => keys.SetApplicationName(KeysApplication))
            : new EphemeralDataProtectionProvider();
    }

    public OidcSettings Settings { get; }

    string IVisitorRule.Kind => Kind.Name;

    public bool WantsCredentials => true;

    public bool IsLogin => true;

    public string Asks => $"a login at {Settings.Authority} (open the page in a browser)";

    /// <summary>The format of the login cookie of <paramref name="session"/>: what a node that shares the keys can read.</summary>
    public static TicketDataFormat TicketFormat(IDataProtectionProvider keys, string session) => LoginCookie.TicketFormat(keys, session);

    public static string SchemeName(string session) => LoginCookie.SchemeName(session);

    public async ValueTask<CredentialOutcome> CheckAsync(VisitorCheck check)
    {
        HttpContext http = check.Context;
        OidcDoor door = _doors.GetOrAdd(check.Session + "|" + check.Prefix,
            static (_, state) => OidcDoor.Open(state.Rule.Settings, state.Rule._keys, state.Session, state.Prefix, OidcCallback.Events),
            (Rule: this, check.Session, check.Prefix));
        ILoggerFactory loggers = http.RequestServices.GetRequiredService<ILoggerFactory>();
        var cookies = new CookieAuthenticationHandler(door.Cookies, loggers, UrlEncoder.Default);
        await cookies.InitializeAsync(door.CookieScheme, http);
        string path = http.Request.Path.Value ?? string.Empty;
        if (path == door.Logout)
        {
            await LogOutAsync(http, cookies);
            return CredentialOutcome.Answered;
        }

        if (path == door.Callback)
        {
            return await CallbackAsync(new OidcCallback(this, check, cookies, loggers.CreateLogger<OidcRule>()), door, loggers);
        }

        AuthenticateResult login = await cookies.AuthenticateAsync();
        if (login.Succeeded && Allows(login.Principal!, out _))
        {
            check.User = login.Principal!.FindFirst("sub")?.Value;
            check.Email = login.Principal.FindFirst("email")?.Value;
            LoginCookie.RemoveFrom(http.Request);
            return CredentialOutcome.Accepted;
        }

        if (login.Failure is not null && check.Decide(failed: true) == AttemptVerdict.Blocked)
        {
            return CredentialOutcome.Blocked; // a cookie that does not open (tampered, expired, another key ring's) counts
        }

        if ((!HttpMethods.IsGet(http.Request.Method) && !HttpMethods.IsHead(http.Request.Method)) || http.Request.Headers.Authorization.Count > 0)
        {
            return CredentialOutcome.Absent; // an API caller: the 401 says what the session takes
        }

        var oidc = new OpenIdConnectHandler(door.Login, loggers, HtmlEncoder.Default, UrlEncoder.Default);
        await oidc.InitializeAsync(door.LoginScheme, http);
        await oidc.ChallengeAsync(new AuthenticationProperties { RedirectUri = http.Request.Path + http.Request.QueryString });
        return CredentialOutcome.Answered;
    }

    /// <summary>True when the account is on the allow lists (every list set must take it): emails or domains, and the claim.</summary>
    public bool Allows(ClaimsPrincipal account, out string who)
    {
        string? email = account.FindFirst("email")?.Value;
        bool verified = account.FindFirst("email_verified")?.Value is not ("false" or "False");
        who = email ?? account.FindFirst("sub")?.Value ?? "an account without a name";
        bool byEmail = (Settings.Emails.Count == 0 && Settings.EmailDomains.Count == 0)
            || (email is not null && verified && (Settings.Emails.Contains(email)
                || Settings.EmailDomains.Contains(email[(email.LastIndexOf('@') + 1)..])));
        bool byClaim = Settings.ClaimName is null
            || account.FindAll(Settings.ClaimName).Any(claim => Settings.ClaimValues.Contains(claim.Value));
        return byEmail && byClaim;
    }

    private static async Task LogOutAsync(HttpContext http, CookieAuthenticationHandler cookies)
    {
        await cookies.SignOutAsync(properties: null);
        http.Response.Headers.CacheControl = "no-store";
        http.Response.ContentType = "text/plain; charset=utf-8";
        await http.Response.WriteAsync("Signed out of this session.\n");
    }

    private static async ValueTask<CredentialOutcome> CallbackAsync(OidcCallback callback, OidcDoor door, ILoggerFactory loggers)
    {
        // Counted before the handler runs (and given back when the login completes), as a password is before bcrypt:
        // a flood of callbacks at once cannot outrun the count, nor make the server ask the provider about each code.
        if (callback.Check.Decide(failed: true) == AttemptVerdict.Blocked)
        {
            return CredentialOutcome.Blocked;
        }

        HttpContext http = callback.Check.Context;
        callback.Attach(http);
        var oidc = new OpenIdConnectHandler(door.Login, loggers, HtmlEncoder.Default, UrlEncoder.Default);
        await oidc.InitializeAsync(door.LoginScheme, http);
        return await oidc.HandleRequestAsync() ? CredentialOutcome.Answered : CredentialOutcome.Absent;
    }
}
