namespace Tunnel2.TunnelClient.Inspection;

/// <summary>A request the inspector cannot replay as asked (its body was cut at the limit, it switched protocols, or the edit is invalid); the message says why.</summary>
public sealed class ReplayRefusedException(string message) : Exception(message);
