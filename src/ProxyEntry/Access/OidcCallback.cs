using System.Security.Claims;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Authentication.OpenIdConnect;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Microsoft.IdentityModel.Tokens;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// One request to the login's callback (<c>…/.tunnel2/oidc/callback</c>), carried through the OpenID Connect handler's
/// events: the provider's answer checked against the allow lists, the cookie set, or the failure counted and said.
/// </summary>
internal sealed record OidcCallback(OidcRule Rule, VisitorCheck Check, CookieAuthenticationHandler Cookies, ILogger Logger)
{
    /// <summary>The handler's events, the same for every session: each finds its request's callback in the context's items.</summary>
    public static readonly OpenIdConnectEvents Events = new() { OnTicketReceived = TicketReceivedAsync, OnRemoteFailure = RemoteFailureAsync };

    private static readonly object Key = new();

    public void Attach(HttpContext http) => http.Items[Key] = this;

    /// <summary>Where a finished login goes back to: a path on this host only (never <c>//other.example</c>).</summary>
    public static string LocalPath(string? back) =>
        back is { Length: > 0 } && back[0] == '/' && (back.Length == 1 || (back[1] != '/' && back[1] != '\\')) ? back : "/";

    /// <summary>The provider's answer checked: an account on the allow lists gets the cookie and goes back where it started.</summary>
    private static async Task TicketReceivedAsync(TicketReceivedContext context)
    {
        var callback = (OidcCallback)context.HttpContext.Items[Key]!;
        ClaimsPrincipal account = context.Principal!;
        context.HandleResponse();
        if (!callback.Rule.Allows(account, out string who))
        {
            OidcLog.AccountRefused(callback.Logger, callback.Check.Session, callback.Check.Remote, who);
            await VisitorDenial.Forbidden($"The account {who} may not visit this session.").WriteAsync(context.HttpContext);
            return;
        }

        // The cookie keeps what the allow lists and the backend need, not the provider's tokens.
        string? claimName = callback.Rule.Settings.ClaimName;
        var kept = new ClaimsIdentity(account.Claims.Where(claim => claim.Type is "sub" or "email" or "email_verified" or "name"
            || claim.Type == claimName), "oidc", "sub", null);
        await callback.Cookies.SignInAsync(new ClaimsPrincipal(kept), context.Properties);
        callback.Check.Refund(); // a completed login is no failed attempt
        OidcLog.LoggedIn(callback.Logger, callback.Check.Session, callback.Check.Remote, who);
        context.HttpContext.Response.Redirect(LocalPath(context.ReturnUri));
    }

    /// <summary>
    /// A callback that does not complete stays counted as a failed attempt: a replayed or forged state, a code the
    /// provider does not know, an ID token the handler refuses (another issuer, a key the provider does not publish, expired).
    /// </summary>
    private static Task RemoteFailureAsync(RemoteFailureContext context)
    {
        var callback = (OidcCallback)context.HttpContext.Items[Key]!;
        context.HandleResponse();
        string reason = context.Failure switch
        {
            SecurityTokenException token => "The provider's ID token was refused: " + TokenProblem.Describe(token),
            { } failure => failure.Message,
            null => "The provider's answer was not understood.",
        };
        OidcLog.CallbackFailed(callback.Logger, callback.Check.Session, callback.Check.Remote, reason);
        return VisitorDenial.Unauthorized($"The login did not complete: {reason} Open the page again to sign in.", []).WriteAsync(context.HttpContext);
    }
}
