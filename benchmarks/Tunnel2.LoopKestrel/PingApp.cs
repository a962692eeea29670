namespace Tunnel2.LoopKestrel;

/// <summary>The backend's own answer: GET /ping is "pong" (the bytes encoded once), anything else 404.</summary>
internal static class PingApp
{
    private static readonly byte[] s_pong = "pong"u8.ToArray();

    public static Task Answer(HttpContext context)
    {
        if (context.Request.Path != "/ping")
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return Task.CompletedTask;
        }
        context.Response.ContentType = "text/plain";
        context.Response.ContentLength = s_pong.Length;
        return context.Response.Body.WriteAsync(s_pong).AsTask();
    }
}
