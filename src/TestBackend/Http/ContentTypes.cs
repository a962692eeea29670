namespace Tunnel2.TestBackend.Http;

internal static class ContentTypes
{
    public const string TextPlain = "text/plain; charset=utf-8";
    public const string Json = "application/json; charset=utf-8";
    public const string ProblemJson = "application/problem+json";
    public const string OctetStream = "application/octet-stream";
}
