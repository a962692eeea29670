using System.Net;
using Microsoft.Extensions.Logging;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>What the bearer-token rule (<see cref="JwtRule"/>) logs: why a token was refused and what to do, never the token.</summary>
internal static partial class JwtLog
{
    [LoggerMessage(EventId = 223, Level = LogLevel.Information,
        Message = "Session {Session}: visitor {Address} refused: its bearer JWT was not accepted ({Reason}): {Detail} To fix: {Advice}")]
    public static partial void TokenRefused(ILogger logger, string session, IPAddress? address, string reason, string detail, string advice);
}
