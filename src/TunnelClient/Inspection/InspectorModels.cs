using System.Text.Json;
using System.Text.Json.Serialization;

namespace Tunnel2.TunnelClient.Inspection;

/// <summary><c>GET /api/requests</c>: the exchanges kept, newest first.</summary>
public sealed record ExchangeList(int Capacity, IReadOnlyList<ExchangeView> Requests);

/// <summary>One exchange as the inspector's API shows it (secrets redacted unless revealed).</summary>
public sealed record ExchangeView(
    long Id,
    long? ReplayOf,
    DateTimeOffset StartedAt,
    double? WaitMs,
    double DurationMs,
    string? Backend,
    string Outcome,
    string? Error,
    RequestView Request,
    ResponseView? Response);

public sealed record RequestView(string Method, string Target, IReadOnlyList<HeaderView> Headers, BodyView? Body);

public sealed record ResponseView(int Status, IReadOnlyList<HeaderView> Headers, BodyView? Body);

public sealed record HeaderView(string Name, string Value);

/// <summary>A body's first bytes: as <see cref="Text"/> when they are text (UTF-8), else as <see cref="Base64"/>.</summary>
public sealed record BodyView(long Size, int Captured, bool Truncated, string? ContentType, string? Text, string? Base64);

/// <summary>
/// <c>POST /api/requests/{id}/replay</c> with a body: the request to send instead of the original. A field left out
/// keeps the original's; a header whose value is <c>[redacted]</c> gets the original's value of that header.
/// </summary>
public sealed record ReplayEdit(string? Method, string? Target, List<HeaderView>? Headers, string? Body);

[JsonSourceGenerationOptions(JsonSerializerDefaults.Web, DefaultIgnoreCondition = JsonIgnoreCondition.Never)]
[JsonSerializable(typeof(ExchangeList))]
[JsonSerializable(typeof(ExchangeView))]
[JsonSerializable(typeof(ReplayEdit))]
[JsonSerializable(typeof(HarDocument))]
internal sealed partial class InspectorJsonContext : JsonSerializerContext;
