namespace Tunnel2.TestBackend.Endpoints;

/// <summary>
/// The single list of routes: <see cref="LoadTestEndpoints"/> maps exactly these, and /loadtest/info
/// and --help print them.
/// </summary>
public static class EndpointCatalog
{
    public static readonly EndpointDescription Ping = new(
        "GET", "/loadtest/ping", "200 text/plain \"pong\" (bytes encoded once).");

    public static readonly EndpointDescription Get = new(
        "GET", "/loadtest/get", "200 JSON describing the request like httpbin's /get: method, url, args, headers, origin.");

    public static readonly EndpointDescription Fast = new(
        "GET", "/loadtest/fast", "200 small fixed JSON object serialized once at start-up.");

    public static readonly EndpointDescription Delay = new(
        "GET", "/loadtest/delay/{ms}", "Waits ms milliseconds (0 to 60000), then 200 JSON {\"delayMs\":ms}; stops waiting when the caller goes away.");

    public static readonly EndpointDescription Echo = new(
        "POST", "/loadtest/echo", "Streams the request body back unchanged with the same Content-Type (and Content-Length); no size limit.");

    public static readonly EndpointDescription Info = new(
        "GET", "/loadtest/info", "This list of endpoints as JSON.");

    public static readonly EndpointDescription Bytes = new(
        "GET", "/loadtest/bytes/{n}", "Streams n bytes (0 to 16 GiB) of application/octet-stream; the byte at offset i is i % 251.");

    public static readonly EndpointDescription Status = new(
        "GET", "/loadtest/status/{code}", "Answers with status code (200 to 599); empty body for 204, 205 and 304, else a tiny text body.");

    public static readonly EndpointDescription Stats = new(
        "GET", "/loadtest/stats", "JSON counters of /loadtest/delay waits: activeWaits, peakActiveWaits, completedWaits, cancelledWaits.");

    public static readonly EndpointDescription Health = new(
        "GET", "/healthz", "200 text/plain \"ok\".");

    public static IReadOnlyList<EndpointDescription> All { get; } =
        [Ping, Get, Fast, Delay, Echo, Info, Bytes, Status, Stats, Health];
}
