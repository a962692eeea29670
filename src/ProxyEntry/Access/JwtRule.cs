using System.Security.Claims;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Protocols;
using Microsoft.IdentityModel.Protocols.OpenIdConnect;
using Microsoft.IdentityModel.Tokens;
using Microsoft.Net.Http.Headers;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// JWT bearer tokens for API callers (<c>Authorization: Bearer &lt;jwt&gt;</c>): signed by one of the issuer's keys
/// (its JWKS), for this audience, and not expired. File:
/// <c>"Jwt": { "Issuer": "https://login.example.com/", "Audience": "api://grafana", "JwksUrl": "https://login.example.com/jwks" }</c>;
/// without <c>JwksUrl</c> the keys come from the issuer's discovery document (<c>.well-known/openid-configuration</c>).
/// The keys are fetched and kept by Microsoft.IdentityModel's <see cref="ConfigurationManager{T}"/>, which fetches them
/// again when a token names a key it does not know (the issuer rotated its keys) and every
/// <c>RefreshMinutes</c> (default 720); the token is checked by its <see cref="JsonWebTokenHandler"/>: signed tokens only
/// (<c>alg: none</c> never passes), issuer, audience, lifetime with <c>ClockSkewSeconds</c> (default 60) of leeway.
/// The identity reaches the backend: <c>sub</c> in <c>X-Forwarded-User</c>, <c>email</c> in <c>X-Forwarded-Email</c>.
/// </summary>
public sealed class JwtRule : IVisitorRule
{
    public static readonly VisitorRuleKind Kind = new("jwt", FromFile);

    private static readonly HttpClient KeysClient = new(new SocketsHttpHandler { PooledConnectionLifetime = TimeSpan.FromMinutes(5) })
    {
        Timeout = TimeSpan.FromSeconds(10),
    };

    private readonly JsonWebTokenHandler _tokens = new() { MapInboundClaims = false };
    private readonly TokenValidationParameters _parameters;
    private ILogger? _logger;

    public JwtRule(string issuer, string audience, Uri? jwksUrl, TimeSpan clockSkew, TimeSpan refresh)
        : this(issuer, audience, jwksUrl, clockSkew, refresh, null)
    {
    }

    /// <param name="documents">Where the key set (or the discovery document) is read from; null: over HTTP.</param>
    internal JwtRule(string issuer, string audience, Uri? jwksUrl, TimeSpan clockSkew, TimeSpan refresh, IDocumentRetriever? documents)
    {
        Issuer = issuer;
        Audience = audience;
        Uri address = jwksUrl ?? new Uri(issuer.TrimEnd('/') + "/.well-known/openid-configuration");
        documents ??= new HttpDocumentRetriever(KeysClient) { RequireHttps = !ProviderAddress.IsLoopback(address) };
        Keys = jwksUrl is null
            ? new ConfigurationManager<OpenIdConnectConfiguration>(address.AbsoluteUri, new OpenIdConnectConfigurationRetriever(), documents)
            : new ConfigurationManager<OpenIdConnectConfiguration>(address.AbsoluteUri, new JwksRetriever(issuer), documents);
        Keys.AutomaticRefreshInterval = refresh;
        Keys.RefreshInterval = TimeSpan.FromSeconds(1); // a token naming an unknown key may fetch the keys again a second later
        _parameters = new TokenValidationParameters
        {
            ValidIssuer = issuer,
            ValidAudience = audience,
            ConfigurationManager = Keys,
            ValidateIssuer = true,
            ValidateAudience = true,
            ValidateLifetime = true,
            RequireExpirationTime = true,
            RequireSignedTokens = true,
            ValidateIssuerSigningKey = true,
            ClockSkew = clockSkew,
        };
    }

    public string Issuer { get; }

    public string Audience { get; }

    /// <summary>The issuer's keys, fetched when first needed and again when they rotate.</summary>
    public ConfigurationManager<OpenIdConnectConfiguration> Keys { get; }

    string IVisitorRule.Kind => Kind.Name;

    public bool WantsCredentials => true;

    public string Asks => $"a JWT from {Issuer} for {Audience} (Authorization: Bearer <jwt>)";

    public string Challenge(string session, VisitorCheck? check) => check?.Problem is { } problem && ReferenceEquals(check.ProblemBy, this)
        ? $"Bearer realm=\"{session}\", error=\"invalid_token\", error_description=\"{problem.Replace("\"", "'", StringComparison.Ordinal)}\""
        : $"Bearer realm=\"{session}\"";

    public async ValueTask<CredentialOutcome> CheckAsync(VisitorCheck check)
    {
        string? authorization = check.Request.Headers.Authorization.Count == 1 ? check.Request.Headers.Authorization[0] : null;
        if (authorization is null || !authorization.StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase))
        {
            return CredentialOutcome.Absent;
        }

        string token = authorization[7..].Trim();
        if (!_tokens.CanReadToken(token))
        {
            return Refuse(check, new TokenRefusal("not-a-jwt", "The bearer token is not a JWT.",
                "the caller sent something else after 'Bearer ' (an API key perhaps); it must send a JWT from " + Issuer));
        }

        TokenValidationResult result = await _tokens.ValidateTokenAsync(token, _parameters.Clone());
        if (!result.IsValid)
        {
            return Refuse(check, TokenProblem.Of(result.Exception));
        }

        check.CredentialsHeader = HeaderNames.Authorization;
        ClaimsIdentity identity = result.ClaimsIdentity;
        check.User = identity.FindFirst("sub")?.Value;
        check.Email = identity.FindFirst("email")?.Value;
        return CredentialOutcome.Accepted;
    }

    private CredentialOutcome Refuse(VisitorCheck check, TokenRefusal refusal)
    {
        // The rules are read from the credentials file, outside the container: the logger comes with the request.
        ILogger logger = _logger ??= check.Context.RequestServices?.GetService<ILoggerFactory>()?.CreateLogger<JwtRule>() ?? (ILogger)NullLogger.Instance;
        JwtLog.TokenRefused(logger, check.Session, check.Remote, refusal.Reason, refusal.Detail, refusal.Advice);
        check.Problem = refusal.Detail;
        check.ProblemBy = this;
        return CredentialOutcome.Wrong;
    }

    private static JwtRule? FromFile(IConfigurationSection entry, string where, List<string> problems)
    {
        var jwt = new RuleSection(entry.GetSection("Jwt"), where, problems);
        if (!jwt.Exists)
        {
            return null;
        }

        Uri? issuer = jwt.Url("Issuer", "must be the issuer's URL (the tokens' iss), such as https://login.example.com/.");
        string? audience = jwt["Audience"];
        if (string.IsNullOrWhiteSpace(audience))
        {
            jwt.Problem("Jwt:Audience must name the audience the tokens are for (their aud).");
        }

        Uri? jwksUrl = jwt["JwksUrl"] is null ? null : jwt.Url("JwksUrl", "must be the URL of the issuer's key set (JWKS).");
        if ((jwksUrl ?? issuer) is { } keysAt && !ProviderAddress.IsSafe(keysAt))
        {
            jwt.Problem("Jwt: the keys must come over https (http only from a loopback address).");
        }

        int skew = jwt.WholeNumber("ClockSkewSeconds", 60, 0, 600);
        int refresh = jwt.WholeNumber("RefreshMinutes", 720, 1, 10080);
        return jwt.HasProblems ? null : new JwtRule(jwt["Issuer"]!, audience!, jwksUrl, TimeSpan.FromSeconds(skew), TimeSpan.FromMinutes(refresh));
    }

    /// <summary>Reads a bare key set (JWKS) into the configuration the token handler takes, with the issuer it is for.</summary>
    private sealed class JwksRetriever(string issuer) : IConfigurationRetriever<OpenIdConnectConfiguration>
    {
        public async Task<OpenIdConnectConfiguration> GetConfigurationAsync(string address, IDocumentRetriever retriever, CancellationToken cancel)
        {
            var keys = new JsonWebKeySet(await retriever.GetDocumentAsync(address, cancel));
            var configuration = new OpenIdConnectConfiguration { Issuer = issuer, JsonWebKeySet = keys };
            foreach (SecurityKey key in keys.GetSigningKeys())
            {
                configuration.SigningKeys.Add(key);
            }

            return configuration;
        }
    }
}
