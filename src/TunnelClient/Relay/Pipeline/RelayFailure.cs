using Tunnel2.Protocol.Frames;

namespace Tunnel2.TunnelClient.Relay.Pipeline;

/// <summary>
/// Why an exchange failed: the reset code that tells the server which status the caller gets, the reason the metrics
/// count (<c>tunnel2.client.requests.failed</c>), and the detail the log and the inspector show.
/// </summary>
internal readonly record struct RelayFailure(ProtocolErrorCode Code, string Reason, string Detail);
