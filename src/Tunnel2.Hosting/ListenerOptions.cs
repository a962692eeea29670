using System.Text.RegularExpressions;

namespace Tunnel2.Hosting;

/// <summary>
/// The listeners an executable binds at start, each by the option that sets it (<c>--public-url</c>) and its value, so
/// that a port already in use is reported as the option to change rather than as a crash (<see cref="ProgramHost"/>).
/// </summary>
public sealed partial class ListenerOptions(IReadOnlyList<KeyValuePair<string, string>> listeners)
{
    public IReadOnlyList<KeyValuePair<string, string>> Listeners { get; } = listeners;

    /// <summary>
    /// The one line for a start that failed because a port is taken, naming the listener's option and value when its
    /// port is known; null when <paramref name="failure"/> is not that.
    /// </summary>
    public string? InUseLine(Exception failure)
    {
        if (!IsAddressInUse(failure))
        {
            return null;
        }

        int? port = PortIn(failure);
        foreach ((string option, string url) in Listeners)
        {
            if (port is not null && ListenAddress.TryParse(url, out ListenAddress? address, out _) && address.Port == port)
            {
                return $"error: {option} {url}: address already in use; choose another port or stop the process using it";
            }
        }

        return $"error: {Innermost(failure).Message.TrimEnd('.')}; choose another port or stop the process using it";
    }

    /// <summary>A bind refused because another socket listens there (Kestrel's <c>AddressInUseException</c>, or a socket's own).</summary>
    public static bool IsAddressInUse(Exception? failure)
    {
        for (Exception? ex = failure; ex is not null; ex = ex.InnerException)
        {
            if (ex is System.Net.Sockets.SocketException { SocketErrorCode: System.Net.Sockets.SocketError.AddressAlreadyInUse }
                || ex.GetType().Name == "AddressInUseException")
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>The message a bind failure is reported with, in Kestrel's words, so that every listener reads alike.</summary>
    public static string BindFailure(string url) => $"Failed to bind to address {url}: address already in use.";

    private static int? PortIn(Exception failure)
    {
        for (Exception? ex = failure; ex is not null; ex = ex.InnerException)
        {
            if (BoundPort().Match(ex.Message) is { Success: true } match)
            {
                return int.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
            }
        }

        return null;
    }

    private static Exception Innermost(Exception failure) => failure.InnerException is { } inner ? Innermost(inner) : failure;

    [GeneratedRegex(@"Failed to bind to address \S*:(\d+): address already in use")]
    private static partial Regex BoundPort();
}
