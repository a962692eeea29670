namespace Tunnel2.TestBackend.Configuration;

/// <summary>Decides whether the default address applies: only when no other source names one.</summary>
internal static class ListenAddress
{
    public const string DefaultUrl = "http://127.0.0.1:12007";

    /// <summary>
    /// True when the configuration already says where to listen: <c>--urls</c>, ASPNETCORE_URLS,
    /// DOTNET_URLS and URLS all end up in the <c>urls</c> key; <c>Kestrel:Endpoints</c> counts too.
    /// ASPNETCORE_HTTP_PORTS deliberately does not: the official container images set it to 8080,
    /// which would silently move the backend off its documented port.
    /// </summary>
    public static bool IsConfigured(IConfiguration configuration) =>
        !string.IsNullOrWhiteSpace(configuration["urls"])
        || configuration.GetSection("Kestrel:Endpoints").GetChildren().Any();
}
