using System.Text.Json.Nodes;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Playwright;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.EndToEndTests.Access;

/// <summary>
/// An ID token from another issuer reaches the login's callback and is refused. Two real providers (oidc-provider):
/// the session trusts the issuer of the first, <c>A</c>; the discovery document its Authority serves names A as the
/// issuer but the endpoints and keys of the second, <c>B</c> (a mixed-up or tampered document, or a provider that
/// signs for another issuer). So the browser logs in at B, B's token endpoint hands over an ID token signed by B for
/// B, and the tunnel must turn it away at the callback: 401 saying why, a log line, and no cookie. With A's keys in
/// the document instead (B's signature then matches no key it names), the answer is the same: Microsoft.IdentityModel
/// names the issuer first.
/// </summary>
public sealed class OidcForeignIssuerTests : IAsyncLifetime
{
    private OidcProvider? _trusted;
    private OidcProvider? _other;
    private WebApplication? _discovery;
    private LoginStack? _login;
    private string? _trustedKeys;
    private bool _withTrustedKeys;

    public async ValueTask InitializeAsync()
    {
        _trusted = await OidcProvider.StartAsync();
        _other = await OidcProvider.StartAsync();
        using var http = new HttpClient();
        JsonNode document = JsonNode.Parse(await http.GetStringAsync(_other.Issuer + "/.well-known/openid-configuration"))!;
        document["issuer"] = _trusted.Issuer;
        _trustedKeys = (string)JsonNode.Parse(await http.GetStringAsync(_trusted.Issuer + "/.well-known/openid-configuration"))!["jwks_uri"]!;
        _discovery = WebApplication.CreateSlimBuilder().Build();
        _discovery.Urls.Add("http://127.0.0.1:0");
        _discovery.MapGet("/.well-known/openid-configuration", () =>
        {
            JsonNode served = document.DeepClone();
            if (_withTrustedKeys)
            {
                served["jwks_uri"] = _trustedKeys;
            }

            return Results.Text(served.ToJsonString(), "application/json");
        });
        await _discovery.StartAsync();
        string authority = _discovery.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        _login = await LoginStack.StartAsync(authority, []);
    }

    public async ValueTask DisposeAsync()
    {
        foreach (IAsyncDisposable? part in new IAsyncDisposable?[] { _login, _discovery, _other, _trusted })
        {
            if (part is not null)
            {
                await part.DisposeAsync();
            }
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task An_ID_token_from_another_issuer_is_refused_at_the_callback_with_401_a_reason_and_a_log_line(bool withTrustedKeys)
    {
        const string why = "The token's issuer is not the one this session trusts.";
        _withTrustedKeys = withTrustedKeys; // read at the login's first challenge, when the server fetches the document
        (IPlaywright playwright, IBrowser browser) = await Chromium.LaunchAsync();
        using IPlaywright _ = playwright;
        await using IBrowser __ = browser;
        IBrowserContext context = await browser.NewContextAsync();
        IPage page = await context.NewPageAsync();

        IResponse? answer = await _other!.LogInAsync(page, _login!.Stack.SessionUrl("/loadtest/get").ToString(), "ivan@example.com", _login.Stack.PublicUrl);

        Assert.Equal(401, answer!.Status);
        Assert.Contains(OidcRule.CallbackPath, answer.Url, StringComparison.Ordinal);
        string detail = (string)JsonNode.Parse(await page.InnerTextAsync("body"))!["detail"]!;
        Assert.True(detail.StartsWith("The login did not complete: The provider's ID token was refused: " + why, StringComparison.Ordinal), detail);
        Assert.DoesNotContain(await context.CookiesAsync(), c => c.Name == OidcRule.CookieName);
        await Eventually.WaitUntilAsync(() => _login.Stack.Server.Output.Contains(
            $"Session {_login.Session}: visitor 127.0.0.1 refused at the login's callback (login-failed): The provider's ID token was refused: " + why,
            StringComparison.Ordinal), "the server logs the refusal");
    }
}
