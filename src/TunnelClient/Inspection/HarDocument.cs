using System.Text.Json.Serialization;

namespace Tunnel2.TunnelClient.Inspection;

// The HTTP Archive format 1.2 (the W3C Web Performance group's draft, as browsers' developer tools export it): only
// the fields the inspector can fill; "headersSize": -1 means unknown, as the format allows.

public sealed record HarDocument(HarLog Log);

public sealed record HarLog(string Version, HarCreator Creator, IReadOnlyList<HarEntry> Entries);

public sealed record HarCreator(string Name, string Version);

public sealed record HarEntry(
    DateTimeOffset StartedDateTime,
    double Time,
    HarRequest Request,
    HarResponse Response,
    HarCache Cache,
    HarTimings Timings,
    [property: JsonPropertyName("serverIPAddress"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? ServerIpAddress,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Comment);

public sealed record HarRequest(
    string Method,
    string Url,
    string HttpVersion,
    IReadOnlyList<HarNameValue> Cookies,
    IReadOnlyList<HarNameValue> Headers,
    IReadOnlyList<HarNameValue> QueryString,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] HarPostData? PostData,
    long HeadersSize,
    long BodySize);

public sealed record HarPostData(string MimeType, string Text, [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Comment);

public sealed record HarResponse(
    int Status,
    string StatusText,
    string HttpVersion,
    IReadOnlyList<HarNameValue> Cookies,
    IReadOnlyList<HarNameValue> Headers,
    HarContent Content,
    [property: JsonPropertyName("redirectURL")] string RedirectUrl,
    long HeadersSize,
    long BodySize);

public sealed record HarContent(
    long Size,
    string MimeType,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Text,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Encoding,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Comment);

public sealed record HarNameValue(string Name, string Value);

public sealed record HarCache;

public sealed record HarTimings(double Send, double Wait, double Receive);
