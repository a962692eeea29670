using System.Text.Json;
using System.Text.Json.Serialization;

namespace Tunnel2.TunnelServer.Admin;

/// <summary>The server as the admin API shows it.</summary>
public sealed record ServerInfo(string Name, string Version, DateTimeOffset StartedAt, string PublicUrl, string TunnelUrl, int Sessions, int Uplinks, bool Draining);

/// <summary>One session in the list: its clients counted, its traffic summed over them.</summary>
/// <param name="TcpPort">The session's public TCP port on this server; null when it has none open.</param>
/// <param name="TcpConnections">TCP connections open on that port now.</param>
public sealed record SessionSummary(string Id, int Clients, int ReadyClients, int OpenStreams, long Requests, long ServerErrors, string Strategy, string Affinity,
    int? TcpPort, int TcpConnections);

/// <summary>One client (one uplink) of a session.</summary>
/// <param name="Id">The server's number for it, used in the drain and disconnect URLs.</param>
/// <param name="Requests">Requests sent to it since it logged in.</param>
/// <param name="ServerErrors">Of those, answered 5xx (by its backend, or by the tunnel on its behalf).</param>
/// <param name="Ready">Its backend passes its probe (or it has none) and no run of failures has put it aside.</param>
public sealed record ClientInfo(long Id, string? InstanceId, string? Remote, string Transport, int ProtocolVersion, DateTimeOffset ConnectedAt, int Weight,
    int OpenStreams, long Requests, long ServerErrors, bool Ready, bool Draining);

/// <summary>One session and its clients.</summary>
/// <param name="TcpPort">The session's public TCP port on this server; null when it has none open.</param>
/// <param name="TcpConnections">TCP connections open on that port now.</param>
public sealed record SessionDetail(string Id, string Strategy, string Affinity, int? TcpPort, int TcpConnections, IReadOnlyList<ClientInfo> Clients);

/// <summary>What a drain or disconnect did.</summary>
public sealed record ClientAction(long Id, string Session, string Action);

/// <summary>One second's picture for the dashboard (<c>/api/live</c>, sent every second).</summary>
public sealed record LiveSnapshot(DateTimeOffset Time, int Uplinks, IReadOnlyList<LiveSession> Sessions);

/// <summary>A session over the last minute: rate, 5xx answers, p50/p99 (ms, bucket bounds), and requests per second for the chart.</summary>
public sealed record LiveSession(string Id, int Clients, int ReadyClients, double RequestsPerSecond, long Requests, long ServerErrors,
    double P50Ms, double P99Ms, long[] PerSecond, int? TcpPort, int TcpConnections);

/// <summary>The admin API's JSON, generated at build time (no reflection: the server is Native AOT ready).</summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(ServerInfo))]
[JsonSerializable(typeof(SessionSummary[]))]
[JsonSerializable(typeof(SessionDetail))]
[JsonSerializable(typeof(ClientAction))]
[JsonSerializable(typeof(LiveSnapshot))]
[JsonSerializable(typeof(Microsoft.AspNetCore.Mvc.ProblemDetails))]
internal sealed partial class AdminJsonContext : JsonSerializerContext;
