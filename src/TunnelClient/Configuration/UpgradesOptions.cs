using System.ComponentModel.DataAnnotations;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>Upgraded streams (section <c>TunnelClient:Upgrades</c>): how a WebSocket's bytes move once the backend said 101.</summary>
public sealed class UpgradesOptions
{
    public const string RelayLoop = "Loop";

    public const string RelayTasks = "Tasks";

    /// <summary>
    /// <c>Loop</c> (the default): once the 101 head has gone up, a plain-TCP backend connection is handed to the client's
    /// event loop as a byte relay, as a raw TCP tunnel is (docs/protocol.md §9), when the uplinks run there too
    /// (<c>Uplink:Engine</c> = <c>Loop</c>, Linux x86-64); a TLS backend, or any other platform, keeps the task relay.
    /// <c>Tasks</c>: the runtime's sockets and a task per direction, as before.
    /// </summary>
    [Required(ErrorMessage = "TunnelClient:Upgrades:Relay must be 'Loop' or 'Tasks'.")]
    [RegularExpression("^(Loop|Tasks)$", ErrorMessage = "TunnelClient:Upgrades:Relay must be 'Loop' or 'Tasks'.")]
    public string Relay { get; set; } = RelayLoop;
}
