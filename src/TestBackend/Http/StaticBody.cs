namespace Tunnel2.TestBackend.Http;

/// <summary>Writes a body that was encoded once, straight into the response pipe.</summary>
internal static class StaticBody
{
    public static Task WriteAsync(HttpResponse response, string contentType, byte[] body)
    {
        response.ContentType = contentType;
        response.ContentLength = body.Length;
        return JsonBody.AsTask(response.BodyWriter.WriteAsync(body, response.HttpContext.RequestAborted));
    }
}
