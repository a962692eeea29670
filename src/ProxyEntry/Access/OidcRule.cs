using System.Collections.Concurrent;
using System.Net;
using System.Security.Claims;
using System.Text.Encodings.Web;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Authentication.OpenIdConnect;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Microsoft.IdentityModel.Protocols.OpenIdConnect;
using Microsoft.Net.Http.Headers;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// A company login in front of a session (OpenID Connect), run by ASP.NET Core's own handlers: the
/// <see cref="OpenIdConnectHandler"/> (authorization code flow with PKCE, state and nonce) and the
/// <see cref="CookieAuthenticationHandler"/> (a signed, HttpOnly cookie scoped to the session's path, or its host when
/// the host names the session; Secure over TLS). A browser without the cookie is sent to the provider; the callback
/// (<c>…/.tunnel2/oidc/callback</c>) checks the allow lists and sets the cookie; <c>…/.tunnel2/oidc/logout</c> clears
/// it. The cookie and the login's state are protected by ASP.NET Core Data Protection: with <c>KeysDirectory</c> every
/// node that reads the same directory takes every node's cookie; without it each process has keys of its own.
/// </summary>
public sealed class OidcRule : IVisitorRule
{
    public const string CookieName = "tunnel2-login";
    public const string CallbackPath = "/.tunnel2/oidc/callback";
    public const string LogoutPath = "/.tunnel2/oidc/logout";

    /// <summary>The Data Protection application name: nodes sharing the keys directory must agree on it.</summary>
    public const string KeysApplication = "Tunnel2";

    public static readonly VisitorRuleKind Kind = new("oidc", FromFile);

    private static readonly object CallbackKey = new();

    private readonly ConcurrentDictionary<string, Door> _doors = new(StringComparer.Ordinal);
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
    public static TicketDataFormat TicketFormat(IDataProtectionProvider keys, string session) =>
        new(keys.CreateProtector("Microsoft.AspNetCore.Authentication.Cookies.CookieAuthenticationMiddleware", SchemeName(session), "v2"));

    public static string SchemeName(string session) => "tunnel2-login:" + session;

    public async ValueTask<CredentialOutcome> CheckAsync(VisitorCheck check)
    {
        HttpContext http = check.Context;
        Door door = _doors.GetOrAdd(check.Session + "|" + check.Prefix, static (_, state) => state.Rule.Open(state.Session, state.Prefix),
            (Rule: this, check.Session, check.Prefix));
        ILoggerFactory loggers = http.RequestServices.GetRequiredService<ILoggerFactory>();
        var cookies = new CookieAuthenticationHandler(door.Cookies, loggers, UrlEncoder.Default);
        await cookies.InitializeAsync(door.CookieScheme, http);
        string path = http.Request.Path.Value ?? string.Empty;
        if (path == door.Logout)
        {
            await cookies.SignOutAsync(properties: null);
            http.Response.Headers.CacheControl = "no-store";
            http.Response.ContentType = "text/plain; charset=utf-8";
            await http.Response.WriteAsync("Signed out of this session.\n");
            return CredentialOutcome.Answered;
        }

        if (path == door.Callback)
        {
            return await CallbackAsync(check, door, cookies, loggers);
        }

        AuthenticateResult login = await cookies.AuthenticateAsync();
        if (login.Succeeded && Allows(login.Principal!, out _))
        {
            check.User = login.Principal!.FindFirst("sub")?.Value;
            check.Email = login.Principal.FindFirst("email")?.Value;
            RemoveLoginCookie(http.Request);
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

    private static async ValueTask<CredentialOutcome> CallbackAsync(VisitorCheck check, Door door, CookieAuthenticationHandler cookies, ILoggerFactory loggers)
    {
        // An address out of failed attempts gets no callback handled: guessing codes or states costs it time.
        if (check.Decide(failed: false) == AttemptVerdict.Blocked)
        {
            return CredentialOutcome.Blocked;
        }

        HttpContext http = check.Context;
        http.Items[CallbackKey] = new Callback(check, cookies);
        var oidc = new OpenIdConnectHandler(door.Login, loggers, HtmlEncoder.Default, UrlEncoder.Default);
        await oidc.InitializeAsync(door.LoginScheme, http);
        return await oidc.HandleRequestAsync() ? CredentialOutcome.Answered : CredentialOutcome.Absent;
    }

    private Door Open(string session, string prefix)
    {
        string cookiePath = prefix.Length == 0 ? "/" : prefix + "/";
        string cookieScheme = SchemeName(session);
        var cookie = new CookieAuthenticationOptions
        {
            ExpireTimeSpan = Settings.CookieLifetime,
            SlidingExpiration = false,
            DataProtectionProvider = _keys,
            TicketDataFormat = TicketFormat(_keys, session),
            TimeProvider = TimeProvider.System,
        };
        cookie.Cookie.Name = CookieName;
        cookie.Cookie.Path = cookiePath;
        cookie.Cookie.HttpOnly = true;
        cookie.Cookie.SecurePolicy = CookieSecurePolicy.SameAsRequest;
        cookie.Cookie.SameSite = Microsoft.AspNetCore.Http.SameSiteMode.Lax;
        new PostConfigureCookieAuthenticationOptions(_keys).PostConfigure(cookieScheme, cookie);

        Uri authority = new(Settings.Authority);
        var login = new OpenIdConnectOptions
        {
            Authority = Settings.Authority,
            ClientId = Settings.ClientId,
            ClientSecret = Settings.ClientSecret,
            ResponseType = OpenIdConnectResponseType.Code,
            ResponseMode = OpenIdConnectResponseMode.Query, // a top-level GET back: the Lax correlation cookie comes with it
            UsePkce = true,
            CallbackPath = prefix + CallbackPath,
            SignInScheme = cookieScheme,
            RequireHttpsMetadata = !IsLoopback(authority),
            MapInboundClaims = false,
            GetClaimsFromUserInfoEndpoint = Settings.UserInfo,
            SaveTokens = false,
            DataProtectionProvider = _keys,
            TimeProvider = TimeProvider.System,
            Events = new OpenIdConnectEvents { OnTicketReceived = TicketReceivedAsync, OnRemoteFailure = RemoteFailureAsync },
        };
        login.Scope.Clear();
        foreach (string scope in Settings.Scopes)
        {
            login.Scope.Add(scope);
        }

        foreach (CookieBuilder builder in (ReadOnlySpan<CookieBuilder>)[login.CorrelationCookie, login.NonceCookie])
        {
            builder.SameSite = Microsoft.AspNetCore.Http.SameSiteMode.Lax;
            builder.SecurePolicy = CookieSecurePolicy.SameAsRequest;
        }

        login.ClaimActions.MapUniqueJsonKey("email_verified", "email_verified");
        string loginScheme = "tunnel2-oidc:" + session;
        new OpenIdConnectPostConfigureOptions(_keys).PostConfigure(loginScheme, login);
        login.Validate(loginScheme);
        return new Door(
            new AuthenticationScheme(cookieScheme, null, typeof(CookieAuthenticationHandler)), new FixedOptions<CookieAuthenticationOptions>(cookie),
            new AuthenticationScheme(loginScheme, null, typeof(OpenIdConnectHandler)), new FixedOptions<OpenIdConnectOptions>(login),
            prefix + CallbackPath, prefix + LogoutPath);
    }

    /// <summary>The provider's answer checked: an account on the allow lists gets the cookie and goes back where it started.</summary>
    private async Task TicketReceivedAsync(TicketReceivedContext context)
    {
        var callback = (Callback)context.HttpContext.Items[CallbackKey]!;
        ClaimsPrincipal account = context.Principal!;
        if (!Allows(account, out string who))
        {
            context.HandleResponse();
            await VisitorDenial.Forbidden($"The account {who} may not visit this session.").WriteAsync(context.HttpContext);
            return;
        }

        // The cookie keeps what the allow lists and the backend need, not the provider's tokens.
        var kept = new ClaimsIdentity(account.Claims.Where(claim => claim.Type is "sub" or "email" or "email_verified" or "name"
            || claim.Type == Settings.ClaimName), "oidc", "sub", null);
        await callback.Cookies.SignInAsync(new ClaimsPrincipal(kept), context.Properties);
        context.HandleResponse();
        context.HttpContext.Response.Redirect(LocalPath(context.ReturnUri));
    }

    /// <summary>A callback that does not complete (a replayed or forged state, a code the provider does not know) counts as a failed attempt.</summary>
    private Task RemoteFailureAsync(RemoteFailureContext context)
    {
        var callback = (Callback)context.HttpContext.Items[CallbackKey]!;
        context.HandleResponse();
        bool blocked = callback.Check.Decide(failed: true) == AttemptVerdict.Blocked;
        return VisitorDenial.Unauthorized($"The login did not complete: {context.Failure?.Message} Open the page again to sign in.", [],
            blocked ? 60 : null).WriteAsync(context.HttpContext);
    }

    /// <summary>Where a finished login goes back to: a path on this host only (never <c>//other.example</c>).</summary>
    internal static string LocalPath(string? back) =>
        back is { Length: > 0 } && back[0] == '/' && (back.Length == 1 || (back[1] != '/' && back[1] != '\\')) ? back : "/";

    private static void RemoveLoginCookie(HttpRequest request)
    {
        if (request.Headers.Cookie.Count == 0)
        {
            return;
        }

        var kept = new List<string>();
        foreach (string? header in request.Headers.Cookie)
        {
            foreach (string part in (header ?? string.Empty).Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            {
                if (!part.StartsWith(CookieName, StringComparison.Ordinal))
                {
                    kept.Add(part);
                }
            }
        }

        if (kept.Count == 0)
        {
            request.Headers.Remove(HeaderNames.Cookie);
        }
        else
        {
            request.Headers.Cookie = string.Join("; ", kept);
        }
    }

    private static bool IsLoopback(Uri address) =>
        address.IsLoopback || (IPAddress.TryParse(address.Host.Trim('[', ']'), out IPAddress? ip) && IPAddress.IsLoopback(ip));

    private static OidcRule? FromFile(IConfigurationSection entry, string where, List<string> problems)
    {
        IConfigurationSection oidc = entry.GetSection("Oidc");
        if (!oidc.Exists())
        {
            return null;
        }

        int before = problems.Count;
        string? authority = oidc["Authority"], clientId = oidc["ClientId"], secret = oidc["ClientSecret"];
        if (!Uri.TryCreate(authority, UriKind.Absolute, out Uri? authorityUri) || authorityUri.Scheme is not ("https" or "http")
            || (authorityUri.Scheme == "http" && !IsLoopback(authorityUri)))
        {
            problems.Add($"{where}: Oidc:Authority must be the provider's https URL (its issuer; http only on a loopback address).");
        }

        if (string.IsNullOrWhiteSpace(clientId) || string.IsNullOrWhiteSpace(secret))
        {
            problems.Add($"{where}: Oidc:ClientId and Oidc:ClientSecret are the tunnel's client at the provider (register …/.tunnel2/oidc/callback as its redirect URI).");
        }

        HashSet<string> emails = Strings(oidc.GetSection("AllowedEmails")), domains = Strings(oidc.GetSection("AllowedEmailDomains"));
        string? claim = oidc["AllowedClaim:Name"];
        HashSet<string> values = Strings(oidc.GetSection("AllowedClaim:Values"));
        if (emails.Count == 0 && domains.Count == 0 && claim is null)
        {
            problems.Add($"{where}: Oidc needs an allow list (AllowedEmails, AllowedEmailDomains or AllowedClaim): without one any account at the provider would get in.");
        }

        if (claim is not null && values.Count == 0)
        {
            problems.Add($"{where}: Oidc:AllowedClaim:Values must list the values of {claim} that may visit.");
        }

        int minutes = 480;
        if (oidc["CookieMinutes"] is { } text && (!int.TryParse(text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out minutes)
            || minutes is < 1 or > 43200))
        {
            problems.Add($"{where}: Oidc:CookieMinutes must be a whole number from 1 to 43200, not '{text}'.");
        }

        HashSet<string> scopes = Strings(oidc.GetSection("Scopes"));
        scopes.UnionWith(["openid", "email"]);
        if (claim is not null && oidc["AllowedClaim:Scope"] is { } claimScope)
        {
            scopes.Add(claimScope);
        }

        return problems.Count > before ? null : new OidcRule(new OidcSettings(authority!, clientId!, secret!, emails, domains, claim, values,
            [.. scopes], TimeSpan.FromMinutes(minutes), oidc["KeysDirectory"], string.Equals(oidc["UserInfo"], "true", StringComparison.OrdinalIgnoreCase)));
    }

    private static HashSet<string> Strings(IConfigurationSection section) =>
        new(section.GetChildren().Select(item => item.Value).OfType<string>().Where(value => value.Length > 0), StringComparer.OrdinalIgnoreCase);

    /// <summary>The handlers' schemes and options for one session and the way it was reached (its path prefix, or its host).</summary>
    private sealed record Door(
        AuthenticationScheme CookieScheme, IOptionsMonitor<CookieAuthenticationOptions> Cookies,
        AuthenticationScheme LoginScheme, IOptionsMonitor<OpenIdConnectOptions> Login,
        string Callback, string Logout);

    private sealed record Callback(VisitorCheck Check, CookieAuthenticationHandler Cookies);

    private sealed class FixedOptions<[System.Diagnostics.CodeAnalysis.DynamicallyAccessedMembers(System.Diagnostics.CodeAnalysis.DynamicallyAccessedMemberTypes.PublicParameterlessConstructor)] T>(T value)
        : IOptionsMonitor<T>
    {
        public T CurrentValue => value;

        public T Get(string? name) => value;

        public IDisposable? OnChange(Action<T, string?> listener) => null;
    }
}

/// <summary>What an <c>Oidc</c> entry of the credentials file says.</summary>
/// <param name="KeysDirectory">Where the Data Protection keys live; every node of a cluster names the same (shared) directory.</param>
/// <param name="UserInfo">True: the claims come from the provider's userinfo endpoint too, not only from the ID token.</param>
public sealed record OidcSettings(
    string Authority, string ClientId, string ClientSecret,
    IReadOnlySet<string> Emails, IReadOnlySet<string> EmailDomains, string? ClaimName, IReadOnlySet<string> ClaimValues,
    IReadOnlyList<string> Scopes, TimeSpan CookieLifetime, string? KeysDirectory, bool UserInfo);
