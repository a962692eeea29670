namespace Tunnel2.LoopKestrel;

/// <summary>One proxy hop reduced to its client side: each GET is sent on with HttpClient (keep-alive connections on the
/// runtime's sockets) and the status and body copied back, so what the loop transport leaves of a request's cost shows.</summary>
internal sealed class ForwardApp(Uri destination)
{
    private readonly string _prefix = destination.ToString().TrimEnd('/');

    private readonly HttpMessageInvoker _client = new(new SocketsHttpHandler { UseProxy = false, AllowAutoRedirect = false });

    public async Task Answer(HttpContext context)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri(_prefix + context.Request.Path + context.Request.QueryString));
        using HttpResponseMessage response = await _client.SendAsync(request, context.RequestAborted);
        context.Response.StatusCode = (int)response.StatusCode;
        context.Response.ContentLength = response.Content.Headers.ContentLength;
        if (response.Content.Headers.ContentType is { } type)
        {
            context.Response.ContentType = type.ToString();
        }
        await response.Content.CopyToAsync(context.Response.Body, context.RequestAborted);
    }
}
