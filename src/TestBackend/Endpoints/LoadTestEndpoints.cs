namespace Tunnel2.TestBackend.Endpoints;

internal static class LoadTestEndpoints
{
    /// <summary>
    /// Maps every route of <see cref="EndpointCatalog"/> with a plain <see cref="RequestDelegate"/>, which
    /// skips the parameter binding machinery of minimal APIs.
    /// </summary>
    public static void MapLoadTestEndpoints(this WebApplication app)
    {
        var services = app.Services;
        var delay = ActivatorUtilities.CreateInstance<DelayEndpoint>(services);
        var echo = ActivatorUtilities.CreateInstance<EchoEndpoint>(services);
        var bytes = ActivatorUtilities.CreateInstance<BytesEndpoint>(services);
        var stats = ActivatorUtilities.CreateInstance<StatsEndpoint>(services);

        Map(app, EndpointCatalog.Ping, PingEndpoint.HandleAsync);
        Map(app, EndpointCatalog.Get, RequestDescriptionEndpoint.HandleAsync);
        Map(app, EndpointCatalog.Fast, FastEndpoint.HandleAsync);
        Map(app, EndpointCatalog.Delay, delay.HandleAsync);
        Map(app, EndpointCatalog.Echo, echo.HandleAsync);
        Map(app, EndpointCatalog.Info, InfoEndpoint.HandleAsync);
        Map(app, EndpointCatalog.Bytes, bytes.HandleAsync);
        Map(app, EndpointCatalog.Status, StatusEndpoint.HandleAsync);
        Map(app, EndpointCatalog.Stats, stats.HandleAsync);
        Map(app, EndpointCatalog.WebSocket, ActivatorUtilities.CreateInstance<WebSocketEchoEndpoint>(services).HandleAsync);
        Map(app, EndpointCatalog.Sse, ActivatorUtilities.CreateInstance<SseEndpoint>(services).HandleAsync);
        Map(app, EndpointCatalog.Health, HealthEndpoint.HandleAsync);
    }

    // A GET route answers HEAD too: Kestrel keeps the head (Content-Length included) and drops the body written.
    private static void Map(IEndpointRouteBuilder routes, EndpointDescription endpoint, RequestDelegate handler) =>
        routes.MapMethods(endpoint.Path, endpoint.Method == HttpMethods.Get ? [HttpMethods.Get, HttpMethods.Head] : [endpoint.Method], handler)
            .WithDisplayName($"{endpoint.Method} {endpoint.Path}");
}
