using System.Globalization;
using System.Net.ServerSentEvents;
using System.Runtime.CompilerServices;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.Hosting.Admin;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;

namespace Tunnel2.TunnelClient.Inspection;

/// <summary>
/// The request inspector's listener (<c>--inspect-url</c>), a small Kestrel host of its own like the admin listener:
/// the page at <c>/</c>; <c>GET /api/requests</c> (newest first), <c>/api/requests/{id}</c>, <c>/api/requests/live</c>
/// (server-sent events), <c>/api/requests.har</c>; <c>POST /api/requests/{id}/replay</c>; <c>DELETE /api/requests</c>.
/// Handlers are plain request delegates with generated JSON code, so the client stays Native AOT ready. The admin
/// token, when set, guards it as it guards the admin listener.
/// </summary>
public sealed class InspectorListener(
    IOptions<TunnelClientOptions> options, RequestInspector inspector, ExchangeReplayer replayer, ILogger<InspectorListener> logger)
    : IHostedService, IAsyncDisposable
{
    private static readonly Lazy<byte[]> Page = new(() =>
        AdminHost.EmbeddedPage(typeof(InspectorListener).Assembly, "Tunnel2.TunnelClient.Inspection.index.html"));

    private WebApplication? _app;

    /// <summary>The bound URL once started (the port chosen when the URL said 0).</summary>
    public Uri? Url { get; private set; }

    public async Task StartAsync(CancellationToken cancellationToken)
    {
        TunnelClientOptions settings = options.Value;
        if (!ListenAddress.TryParse(settings.Inspector.Url, out ListenAddress? address, out _))
        {
            return;
        }

        (_app, Url) = await AdminHost.StartAsync(address, Map, cancellationToken);
        TunnelClientLog.InspectorListening(logger, Url, inspector.Capacity, inspector.BodyLimit);
    }

    private void Map(WebApplication app)
    {
        app.UseAdminToken(options.Value.Admin.Token);
        app.MapGet("/", context => Results.Bytes(Page.Value, "text/html; charset=utf-8").ExecuteAsync(context));
        app.MapGet("/api/requests", ListAsync);
        app.MapGet("/api/requests.har", HarAsync);
        app.MapGet("/api/requests/live", LiveAsync);
        app.MapGet("/api/requests/{id:long}", GetAsync);
        app.MapPost("/api/requests/{id:long}/replay", ReplayAsync);
        app.MapDelete("/api/requests", context =>
        {
            inspector.Clear();
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return Task.CompletedTask;
        });
        app.MapFallback(context => AdminEndpoints.WriteProblemAsync(context, StatusCodes.Status404NotFound, ProblemTypes.NotFound, "Not found",
            "The inspector serves / and /api/requests."));
    }

    public Task StopAsync(CancellationToken cancellationToken) => _app?.StopAsync(cancellationToken) ?? Task.CompletedTask;

    public ValueTask DisposeAsync() => _app?.DisposeAsync() ?? ValueTask.CompletedTask;

    private Task ListAsync(HttpContext context)
    {
        List<InspectedExchange> kept = inspector.Snapshot();
        var views = new List<ExchangeView>(kept.Count);
        foreach (InspectedExchange exchange in kept)
        {
            views.Add(InspectorViews.Of(exchange, inspector.RevealSecrets));
        }

        return context.Response.WriteAsJsonAsync(new ExchangeList(inspector.Capacity, views), InspectorJsonContext.Default.ExchangeList);
    }

    private Task GetAsync(HttpContext context) =>
        Find(context) is { } exchange
            ? context.Response.WriteAsJsonAsync(InspectorViews.Of(exchange, inspector.RevealSecrets), InspectorJsonContext.Default.ExchangeView)
            : NotKeptAsync(context);

    private Task HarAsync(HttpContext context)
    {
        context.Response.Headers.ContentDisposition = "attachment; filename=\"tunnel2.har\"";
        return context.Response.WriteAsJsonAsync(HarExport.Of(inspector.Snapshot(), inspector.RevealSecrets), InspectorJsonContext.Default.HarDocument,
            "application/json");
    }

    /// <summary>
    /// Each exchange recorded from now on (event <c>request</c>), and <c>cleared</c> when the list is emptied. The feed
    /// ends when the client stops, too: an open page must not hold up its shutdown.
    /// </summary>
    private async Task LiveAsync(HttpContext context)
    {
        using var ended = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted, _app!.Lifetime.ApplicationStopping);
        await TypedResults.ServerSentEvents(Events(ended.Token)).ExecuteAsync(context);
    }

    private async IAsyncEnumerable<SseItem<string>> Events([EnumeratorCancellation] CancellationToken aborted)
    {
        System.Threading.Channels.ChannelReader<InspectorEvent> feed = inspector.Watch(aborted);
        yield return new SseItem<string>("{}", "hello"); // sends the headers at once, so the page knows it is live
        while (await WaitAsync(feed, aborted))
        {
            while (feed.TryRead(out InspectorEvent? next))
            {
                yield return next.Exchange is { } exchange
                    ? new SseItem<string>(JsonSerializer.Serialize(InspectorViews.Of(exchange, inspector.RevealSecrets), InspectorJsonContext.Default.ExchangeView), "request")
                    : new SseItem<string>("{}", "cleared");
            }
        }
    }

    private static async ValueTask<bool> WaitAsync(System.Threading.Channels.ChannelReader<InspectorEvent> feed, CancellationToken aborted)
    {
        try
        {
            return await feed.WaitToReadAsync(aborted);
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    private async Task ReplayAsync(HttpContext context)
    {
        if (Find(context) is not { } original)
        {
            await NotKeptAsync(context);
            return;
        }

        ReplayEdit? edit = null;
        if (context.Request.ContentLength is > 0 || context.Request.Headers.TransferEncoding.Count > 0)
        {
            try
            {
                edit = await context.Request.ReadFromJsonAsync(InspectorJsonContext.Default.ReplayEdit, context.RequestAborted);
            }
            catch (Exception ex) when (ex is JsonException or InvalidOperationException)
            {
                await AdminEndpoints.WriteProblemAsync(context, StatusCodes.Status400BadRequest, ProblemTypes.ReplayEdit, "Invalid replay",
                    $"The body must be JSON like {{\"method\":\"GET\",\"target\":\"/\",\"headers\":[{{\"name\":\"Accept\",\"value\":\"*/*\"}}],\"body\":null}}: {ex.Message}");
                return;
            }
        }

        InspectedExchange replayed;
        try
        {
            replayed = await replayer.ReplayAsync(original, edit, context.RequestAborted);
        }
        catch (ReplayRefusedException ex)
        {
            TunnelClientLog.ReplayRefused(logger, original.Id, ex.Message);
            await AdminEndpoints.WriteProblemAsync(context, StatusCodes.Status409Conflict, ProblemTypes.ReplayRefused, "Cannot replay", ex.Message);
            return;
        }

        await context.Response.WriteAsJsonAsync(InspectorViews.Of(replayed, inspector.RevealSecrets), InspectorJsonContext.Default.ExchangeView);
    }

    private InspectedExchange? Find(HttpContext context) =>
        long.TryParse(context.GetRouteValue("id") as string, NumberStyles.None, CultureInfo.InvariantCulture, out long id) ? inspector.Find(id) : null;

    private Task NotKeptAsync(HttpContext context) =>
        AdminEndpoints.WriteProblemAsync(context, StatusCodes.Status404NotFound, ProblemTypes.RequestNotKept, "No such request",
            $"The inspector keeps the last {inspector.Capacity} requests; this one is not among them.");
}
