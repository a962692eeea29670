using System.Globalization;
using Serilog.Events;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// An in-process TunnelClient's dials to one server as its own log tells them ("Connected to", "Could not connect to …
/// retrying in"), with the client's timestamps: a timing claim read from them leaves out whatever the test did meanwhile.
/// The client must log its uplinks at Information (<see cref="Logs"/>) for its connects to be seen.
/// </summary>
public sealed class ClientDials
{
    /// <summary>The client setting that logs its uplinks' connects (the tests' clients log warnings only).</summary>
    public const string Logs = "--Serilog:MinimumLevel:Override:Tunnel2.TunnelClient.Uplinks=Information";

    private ClientDials(List<Retry> retries, List<DateTimeOffset> connects)
    {
        Retries = retries;
        Connects = connects;
    }

    /// <summary>Failed dials, oldest first: when the client logged each, why it failed, and how long it chose to wait.</summary>
    public IReadOnlyList<Retry> Retries { get; }

    /// <summary>When each uplink came up, oldest first.</summary>
    public IReadOnlyList<DateTimeOffset> Connects { get; }

    /// <summary>The dials to <paramref name="server"/> (its authority is the client's name for it) logged at or after <paramref name="since"/>.</summary>
    public static ClientDials To(Uri server, DateTimeOffset since)
    {
        var retries = new List<Retry>();
        var connects = new List<DateTimeOffset>();
        foreach (LogEvent logEvent in CapturedLogs.EventsWhere("Server", server.Authority))
        {
            if (logEvent.Timestamp < since || CapturedLogs.Text(logEvent, "Server") != server.Authority)
            {
                continue;
            }

            if (CapturedLogs.Text(logEvent, "DelayMs") is { } delayMs)
            {
                retries.Add(new Retry(logEvent.Timestamp, CapturedLogs.Text(logEvent, "Reason") ?? "",
                    TimeSpan.FromMilliseconds(long.Parse(delayMs, CultureInfo.InvariantCulture))));
            }
            else if (logEvent.Properties.ContainsKey("Session"))
            {
                connects.Add(logEvent.Timestamp);
            }
        }

        return new ClientDials(retries, connects);
    }

    public readonly record struct Retry(DateTimeOffset At, string Reason, TimeSpan Delay);
}
