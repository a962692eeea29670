using System.Net;
using Microsoft.Extensions.Logging;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>What the login (<see cref="OidcRule"/>) logs: who got in, who was turned away after it, and callbacks that did not complete.</summary>
internal static partial class OidcLog
{
    [LoggerMessage(EventId = 220, Level = LogLevel.Information, Message = "Session {Session}: visitor {Address} logged in as {Account}")]
    public static partial void LoggedIn(ILogger logger, string session, IPAddress? address, string account);

    [LoggerMessage(EventId = 221, Level = LogLevel.Information,
        Message = "Session {Session}: visitor {Address} refused after the login (account-not-allowed): {Account} is on none of the entry's allow lists; add it to AllowedEmails, AllowedEmailDomains or AllowedClaim to let it in")]
    public static partial void AccountRefused(ILogger logger, string session, IPAddress? address, string account);

    [LoggerMessage(EventId = 222, Level = LogLevel.Information,
        Message = "Session {Session}: visitor {Address} refused at the login's callback (login-failed): {Reason} If real visitors meet this, check the entry's Authority and ClientId against the provider")]
    public static partial void CallbackFailed(ILogger logger, string session, IPAddress? address, string reason);
}
