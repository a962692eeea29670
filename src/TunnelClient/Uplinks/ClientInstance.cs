using System.Globalization;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>
/// This client run's identity, sent as <c>Tunnel2-Instance</c> on every login: a reconnect of the same run replaces
/// the server's stale uplink at once instead of sitting beside it until the server's keep-alive times it out.
/// </summary>
public sealed class ClientInstance
{
    public string Id { get; } = Guid.NewGuid().ToString("N");

    /// <summary>The instance id one uplink of this run logs in with: each of several uplinks replaces only its own stale self.</summary>
    public string ForUplink(int slot) => string.Create(CultureInfo.InvariantCulture, $"{Id}-{slot}");
}
