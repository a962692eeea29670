using Microsoft.Extensions.Logging;
using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

public sealed partial class Uplink
{
    /// <remarks>
    /// The close and the drain are at debug level: the executables log them in their users' terms (the client's
    /// "Stopping", "Drained" and "Disconnected", the server's "Uplink disconnected" and "Draining").
    /// </remarks>
    private static partial class Log
    {
        [LoggerMessage(EventId = 100, Level = LogLevel.Debug, Message = "Uplink {Uplink} closed: {Reason} ({OpenStreams} streams open)")]
        public static partial void UplinkClosed(ILogger logger, string uplink, string reason, int openStreams);

        [LoggerMessage(EventId = 101, Level = LogLevel.Warning, Message = "Uplink {Uplink} broke the protocol: {Detail}; closing it")]
        public static partial void ProtocolViolation(ILogger logger, string uplink, string detail);

        [LoggerMessage(EventId = 102, Level = LogLevel.Debug, Message = "Uplink {Uplink}: peer is draining ({Code})")]
        public static partial void PeerDraining(ILogger logger, string uplink, ProtocolErrorCode code);

        [LoggerMessage(EventId = 103, Level = LogLevel.Error, Message = "Uplink {Uplink} failed unexpectedly")]
        public static partial void UnexpectedFailure(ILogger logger, string uplink, Exception exception);

        [LoggerMessage(EventId = 104, Level = LogLevel.Warning, Message = "Uplink {Uplink}: stream {StreamId} refused, already {Limit} streams open")]
        public static partial void StreamRefusedOverLimit(ILogger logger, string uplink, uint streamId, int limit);

        [LoggerMessage(EventId = 105, Level = LogLevel.Warning, Message = "Uplink {Uplink}: the writer did not stop promptly after the close (frozen peer?); not waiting for it")]
        public static partial void WriterStuck(ILogger logger, string uplink);

        [LoggerMessage(EventId = 106, Level = LogLevel.Debug, Message = "Uplink {Uplink}: draining, {OpenStreams} streams open, deadline {TimeoutMs} ms")]
        public static partial void Draining(ILogger logger, string uplink, int openStreams, long timeoutMs);

        [LoggerMessage(EventId = 107, Level = LogLevel.Debug, Message = "Uplink {Uplink}: drained")]
        public static partial void Drained(ILogger logger, string uplink);

        [LoggerMessage(EventId = 108, Level = LogLevel.Warning, Message = "Uplink {Uplink}: drain deadline passed with {OpenStreams} streams still open; closing them")]
        public static partial void DrainTimedOut(ILogger logger, string uplink, int openStreams);

        [LoggerMessage(EventId = 109, Level = LogLevel.Information, Message = "Uplink {Uplink}: the client reports its backend {Health}")]
        public static partial void PeerHealthChanged(ILogger logger, string uplink, string health);
    }
}
