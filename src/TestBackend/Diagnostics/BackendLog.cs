namespace Tunnel2.TestBackend.Diagnostics;

internal static partial class BackendLog
{
    [LoggerMessage(EventId = 1, Level = LogLevel.Information,
        Message = "TestBackend listening on {Addresses}; MaxConcurrentConnections={MaxConcurrentConnections}, KeepAliveTimeout={KeepAliveTimeout}, MaxRequestBufferSize={MaxRequestBufferSize}, RequestLogging={RequestLogging}")]
    public static partial void Started(
        ILogger logger, string addresses, long maxConcurrentConnections, TimeSpan keepAliveTimeout, long maxRequestBufferSize, bool requestLogging);

    [LoggerMessage(EventId = 2, Level = LogLevel.Debug,
        Message = "Delay of {DelayMs} ms cancelled by the caller")]
    public static partial void DelayCancelled(ILogger logger, long delayMs);

    [LoggerMessage(EventId = 3, Level = LogLevel.Debug,
        Message = "{Endpoint} stopped after {Bytes} bytes: the caller went away")]
    public static partial void StreamAborted(ILogger logger, string endpoint, long bytes);
}
