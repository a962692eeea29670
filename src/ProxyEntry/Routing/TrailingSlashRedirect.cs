using Microsoft.AspNetCore.Http;

namespace Tunnel2.ProxyEntry.Routing;

/// <summary>
/// <c>/session/{id}</c> → <c>/session/{id}/</c>, query kept: 301 as nginx answers for a prefix location, 308 for
/// methods other than GET and HEAD so that a form post is not turned into a GET.
/// </summary>
internal static class TrailingSlashRedirect
{
    public static Task WriteAsync(HttpContext context, string location)
    {
        bool safe = HttpMethods.IsGet(context.Request.Method) || HttpMethods.IsHead(context.Request.Method);
        context.Response.StatusCode = safe ? StatusCodes.Status301MovedPermanently : StatusCodes.Status308PermanentRedirect;
        context.Response.Headers.Location = location;
        context.Response.ContentLength = 0;
        return Task.CompletedTask;
    }
}
