namespace Tunnel2.TestBackend.Http;

/// <summary>
/// Gives a problem+json body to error responses that have none: unknown paths (404) and known paths
/// called with the wrong method (the 405 that routing produces). A lean stand-in for UseStatusCodePages
/// that allocates nothing on the success path.
/// </summary>
internal static class ProblemStatusMiddleware
{
    public static RequestDelegate Create(RequestDelegate next) => context =>
    {
        var task = next(context);
        if (!task.IsCompletedSuccessfully)
        {
            return AwaitThenDescribe(task, context);
        }

        return NeedsBody(context.Response) ? Describe(context) : Task.CompletedTask;
    };

    private static async Task AwaitThenDescribe(Task task, HttpContext context)
    {
        await task;
        if (NeedsBody(context.Response))
        {
            await Describe(context);
        }
    }

    private static bool NeedsBody(HttpResponse response) =>
        response.StatusCode >= 400
        && !response.HasStarted
        && response.ContentLength is null
        && string.IsNullOrEmpty(response.ContentType);

    private static Task Describe(HttpContext context)
    {
        var request = context.Request;
        var status = context.Response.StatusCode;
        var detail = status switch
        {
            404 => $"Nothing is served at {request.Path}. GET /loadtest/info lists the endpoints.",
            405 => $"{request.Method} is not allowed on {request.Path}; allowed: {context.Response.Headers.Allow}.",
            _ => $"{request.Method} {request.Path} failed with status {status}.",
        };
        return ProblemDetailsWriter.WriteAsync(context, status, detail);
    }
}
