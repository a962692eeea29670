using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Authentication.OpenIdConnect;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Options;
using Microsoft.IdentityModel.Protocols.OpenIdConnect;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// The login's handlers for one session and the way it was reached (its path prefix, or its host): the schemes and
/// options of ASP.NET Core's cookie handler and OpenID Connect handler, and the two paths the rule answers itself.
/// Built once per session and prefix, outside the host's options system (sessions come and go; schemes are fixed).
/// </summary>
internal sealed record OidcDoor(
    AuthenticationScheme CookieScheme, IOptionsMonitor<CookieAuthenticationOptions> Cookies,
    AuthenticationScheme LoginScheme, IOptionsMonitor<OpenIdConnectOptions> Login,
    string Callback, string Logout)
{
    public static OidcDoor Open(OidcSettings settings, IDataProtectionProvider keys, string session, string prefix, OpenIdConnectEvents events)
    {
        string cookieScheme = LoginCookie.SchemeName(session), loginScheme = "tunnel2-oidc:" + session;
        CookieAuthenticationOptions cookie = CookieOptions(settings, keys, session, prefix);
        new PostConfigureCookieAuthenticationOptions(keys).PostConfigure(cookieScheme, cookie);
        OpenIdConnectOptions login = LoginOptions(settings, keys, prefix, cookieScheme, events);
        new OpenIdConnectPostConfigureOptions(keys).PostConfigure(loginScheme, login);
        login.Validate(loginScheme);
        return new OidcDoor(
            new AuthenticationScheme(cookieScheme, null, typeof(CookieAuthenticationHandler)), new FixedOptions<CookieAuthenticationOptions>(cookie),
            new AuthenticationScheme(loginScheme, null, typeof(OpenIdConnectHandler)), new FixedOptions<OpenIdConnectOptions>(login),
            prefix + OidcRule.CallbackPath, prefix + OidcRule.LogoutPath);
    }

    /// <summary>
    /// The cookie: signed and encrypted with the (shared) keys, HttpOnly, Lax, scoped to the session's path (or its
    /// host), Secure when the request came over https (TLS here, or at a trusted edge: the forwarded headers set the scheme).
    /// </summary>
    private static CookieAuthenticationOptions CookieOptions(OidcSettings settings, IDataProtectionProvider keys, string session, string prefix)
    {
        var cookie = new CookieAuthenticationOptions
        {
            ExpireTimeSpan = settings.CookieLifetime,
            SlidingExpiration = false,
            DataProtectionProvider = keys,
            TicketDataFormat = LoginCookie.TicketFormat(keys, session),
            TimeProvider = TimeProvider.System,
        };
        cookie.Cookie.Name = LoginCookie.Name;
        cookie.Cookie.Path = prefix.Length == 0 ? "/" : prefix + "/";
        cookie.Cookie.HttpOnly = true;
        cookie.Cookie.SecurePolicy = CookieSecurePolicy.SameAsRequest;
        cookie.Cookie.SameSite = SameSiteMode.Lax;
        return cookie;
    }

    /// <summary>The code flow with PKCE, state and nonce; its redirect URI is the request's scheme and host plus the callback path.</summary>
    private static OpenIdConnectOptions LoginOptions(OidcSettings settings, IDataProtectionProvider keys, string prefix, string cookieScheme, OpenIdConnectEvents events)
    {
        var login = new OpenIdConnectOptions
        {
            Authority = settings.Authority,
            ClientId = settings.ClientId,
            ClientSecret = settings.ClientSecret,
            ResponseType = OpenIdConnectResponseType.Code,
            ResponseMode = OpenIdConnectResponseMode.Query, // a top-level GET back: the Lax correlation cookie comes with it
            UsePkce = true,
            CallbackPath = prefix + OidcRule.CallbackPath,
            SignInScheme = cookieScheme,
            RequireHttpsMetadata = !ProviderAddress.IsLoopback(new Uri(settings.Authority)),
            MapInboundClaims = false,
            GetClaimsFromUserInfoEndpoint = settings.UserInfo,
            SaveTokens = false,
            DataProtectionProvider = keys,
            TimeProvider = TimeProvider.System,
            Events = events,
        };
        login.Scope.Clear();
        foreach (string scope in settings.Scopes)
        {
            login.Scope.Add(scope);
        }

        foreach (CookieBuilder builder in (ReadOnlySpan<CookieBuilder>)[login.CorrelationCookie, login.NonceCookie])
        {
            builder.SameSite = SameSiteMode.Lax;
            builder.SecurePolicy = CookieSecurePolicy.SameAsRequest;
        }

        login.ClaimActions.MapUniqueJsonKey("email_verified", "email_verified");
        return login;
    }
}
