using Microsoft.Extensions.Logging;
using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

public sealed partial class Uplink
{
    private static partial class Log
    {
        [LoggerMessage(EventId = 100, Level = LogLevel.Information, Message = "Uplink {Uplink} closed: {Reason} ({OpenStreams} streams open)")]
        public static partial void UplinkClosed(ILogger logger, string uplink, string reason, int openStreams);

        [LoggerMessage(EventId = 101, Level = LogLevel.Warning, Message = "Uplink {Uplink} broke the protocol: {Detail}; closing it")]
        public static partial void ProtocolViolation(ILogger logger, string uplink, string detail);

        [LoggerMessage(EventId = 102, Level = LogLevel.Information, Message = "Uplink {Uplink}: peer is draining ({Code})")]
        public static partial void PeerDraining(ILogger logger, string uplink, ProtocolErrorCode code);

        [LoggerMessage(EventId = 103, Level = LogLevel.Error, Message = "Uplink {Uplink} failed unexpectedly")]
        public static partial void UnexpectedFailure(ILogger logger, string uplink, Exception exception);
    }
}
