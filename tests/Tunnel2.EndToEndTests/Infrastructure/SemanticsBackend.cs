using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A second real Kestrel backend for HTTP details TestBackend has no endpoint for: the raw target it received,
/// several Set-Cookie headers, conditional 304, a chunked answer, a response cut off mid-body, and redirects to its
/// own origin and root.
/// </summary>
public sealed class SemanticsBackend : IAsyncDisposable
{
    private readonly LoopbackApp _app;

    private SemanticsBackend(LoopbackApp app)
    {
        _app = app;
    }

    public Uri Url => _app.Url;

    public static async Task<SemanticsBackend> StartAsync()
    {
        return new SemanticsBackend(await LoopbackApp.StartAsync(Map));
    }

    private static void Map(WebApplication app)
    {
        app.MapGet("/cookies", (HttpContext context) =>
        {
            context.Response.Headers.Append("Set-Cookie", "a=1; Path=/");
            context.Response.Headers.Append("Set-Cookie", "b=2; Path=/; HttpOnly");
            return Results.Text("cookies");
        });
        app.MapGet("/etag", (HttpContext context) =>
        {
            context.Response.Headers.ETag = "\"v1\"";
            if (context.Request.Headers.IfNoneMatch == "\"v1\"")
            {
                return Results.StatusCode(StatusCodes.Status304NotModified);
            }

            return Results.Text("fresh");
        });
        app.MapGet("/chunked", async (HttpContext context) =>
        {
            context.Response.ContentType = "text/plain";
            for (int i = 0; i < 5; i++)
            {
                await context.Response.WriteAsync($"part{i};");
                await context.Response.Body.FlushAsync();
            }
        });
        app.MapGet("/truncated", async (HttpContext context) =>
        {
            context.Response.ContentLength = 1_000_000;
            await context.Response.Body.WriteAsync(new byte[100_000]);
            await context.Response.Body.FlushAsync();
            context.Abort(); // the backend drops the connection mid-response
        });
        app.MapGet("/redirect/absolute", (HttpContext context) =>
        {
            // As a backend that builds absolute URLs from the Host it gets does (the caller's, or its own with --host-header rewrite).
            context.Response.StatusCode = StatusCodes.Status301MovedPermanently;
            context.Response.Headers.Location = $"{context.Request.Scheme}://{context.Request.Host}/index.html?from=absolute";
        });
        app.MapGet("/redirect/root", (HttpContext context) =>
        {
            context.Response.StatusCode = StatusCodes.Status302Found;
            context.Response.Headers.Location = "/login?next=%2Fx";
            context.Response.Headers["Refresh"] = "0; url=/login";
            context.Response.Headers.Append("Set-Cookie", "session=s1; Path=/; HttpOnly");
        });
        app.MapMethods("/head", ["GET", "HEAD"], (HttpContext context) =>
        {
            context.Response.ContentType = "text/plain";
            context.Response.ContentLength = 11;
            return HttpMethods.IsHead(context.Request.Method) ? Task.CompletedTask : context.Response.WriteAsync("hello world");
        });
        app.MapFallback((HttpContext context) =>
        {
            // Everything else: answer with the raw target and the request headers as received.
            string raw = context.Features.Get<IHttpRequestFeature>()!.RawTarget;
            var lines = new List<string> { raw };
            foreach (KeyValuePair<string, Microsoft.Extensions.Primitives.StringValues> header in context.Request.Headers)
            {
                foreach (string? value in header.Value)
                {
                    lines.Add($"{header.Key}: {value}");
                }
            }

            return context.Response.WriteAsync(string.Join('\n', lines));
        });

    }

    public ValueTask DisposeAsync() => _app.DisposeAsync();
}
