namespace Tunnel2.TestBackend.Endpoints;

/// <summary>
/// The single list of routes: <see cref="LoadTestEndpoints"/> maps exactly these, and /loadtest/info
/// and --help print them. Every GET route answers HEAD too, as nginx and httpbin do.
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

    public static readonly EndpointDescription WebSocket = new(
        "GET", "/loadtest/ws", "WebSocket echo: every message comes back with its type, fragment by fragment; a close is answered with the same status. A plain GET gets 426.");

    public static readonly EndpointDescription Sse = new(
        "GET", "/loadtest/sse", "text/event-stream of n events (?n=, default 10; 0 = until the caller leaves), the first at once, then one every intervalMs (?intervalMs=, default 1000, 0 to 60000).");

    public static readonly EndpointDescription Health = new(
        "GET", "/healthz", "200 text/plain \"ok\".");

    public static IReadOnlyList<EndpointDescription> All { get; } =
        [Ping, Get, Fast, Delay, Echo, Info, Bytes, Status, Stats, WebSocket, Sse, Health];
}
