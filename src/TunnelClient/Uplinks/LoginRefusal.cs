using System.Text.Json;
using Tunnel2.Hosting;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>
/// A login the server refused, told from its problem type (RFC 9457 <c>type</c>, one of <see cref="ProblemTypes"/>): what
/// happened, the server's detail as a sentence, and what to do; never the raw document. The refusals that retrying
/// cannot cure are permanent: the client stops with exit code 3.
/// </summary>
internal sealed record LoginRefusal(int Status, string Message, bool IsPermanent)
{
    public const string ProblemPrefix = ProblemTypes.Prefix;

    /// <summary>The type a server's public port answers the uplink path with (it names the tunnel port).</summary>
    public const string WrongPort = "wrong-port";

    /// <summary>The type the client gives a TCP login that a server older than TCP answered without a port.</summary>
    public const string TcpUnsupported = "tcp-unsupported";

    public static LoginRefusal Read(int status, string body)
    {
        (string? type, string? detail) = Problem(body);
        string sentence = Sentence(detail ?? (string.IsNullOrWhiteSpace(body) ? null : body.Trim()));
        return From(status, type, sentence);
    }

    /// <param name="type">The problem type's last part (<c>tcp-off</c>), or null when the answer was not a Tunnel2 problem.</param>
    /// <param name="detail">The server's detail, a sentence ending with a period (empty when it gave none).</param>
    public static LoginRefusal From(int status, string? type, string detail) => type switch
    {
        "bad-token" => Permanent(status, $"The server refused the token ({status}).", detail,
            "Check --token (or TunnelClient__Token)."),
        "session-not-allowed" => Permanent(status, "The server refused the session for this token.", detail,
            "Use a session this token may serve (its Sessions in the server's credentials file), or the token of that session."),
        "tcp-off" => Permanent(status, "The server has no TCP ports.", detail,
            "Start the server with --tcp-ports (e.g. --tcp-ports 20000-20099), or run this client without --tcp."),
        "bad-version" or TcpUnsupported => Permanent(status, "The server speaks another version of the Tunnel2 protocol.", detail,
            "Run a TunnelClient of the server's release (TunnelServer --version, TunnelClient --version)."),
        WrongPort => Permanent(status, "--server points at TunnelServer's public port.", detail,
            detail.Length == 0 ? "Point --server at its tunnel port (the server's --tunnel-url)." : string.Empty),
        _ when status is 401 or 403 => Permanent(status, $"The server refused the login ({status}).", detail, "Check --token, --session and the options this login asked for."),
        _ => new LoginRefusal(status, $"Server answered {status}: {(detail.Length == 0 ? "(no detail)" : detail)}", IsPermanent: false),
    };

    private static LoginRefusal Permanent(int status, string what, string detail, string todo) =>
        new(status, string.Join(' ', new[] { what, detail, todo }.Where(part => part.Length > 0)), IsPermanent: true);

    /// <summary>The problem's type (without <see cref="ProblemTypes.Prefix"/>) and detail, when the body is one.</summary>
    private static (string? Type, string? Detail) Problem(string body)
    {
        if (!body.TrimStart().StartsWith('{'))
        {
            return (null, null);
        }

        try
        {
            using var document = JsonDocument.Parse(body);
            JsonElement root = document.RootElement;
            string? type = root.TryGetProperty("type", out JsonElement typeValue) && typeValue.ValueKind == JsonValueKind.String ? typeValue.GetString() : null;
            string? detail = root.TryGetProperty("detail", out JsonElement detailValue) && detailValue.ValueKind == JsonValueKind.String ? detailValue.GetString() : null;
            string? title = root.TryGetProperty("title", out JsonElement titleValue) && titleValue.ValueKind == JsonValueKind.String ? titleValue.GetString() : null;
            return (type is not null && type.StartsWith(ProblemPrefix, StringComparison.Ordinal) ? type[ProblemPrefix.Length..] : null, detail ?? title ?? string.Empty);
        }
        catch (JsonException)
        {
            return (null, null);
        }
    }

    /// <summary>The detail as a sentence: capitalised, ending with a period.</summary>
    internal static string Sentence(string? detail)
    {
        string text = detail?.Trim() ?? string.Empty;
        if (text.Length == 0)
        {
            return string.Empty;
        }

        text = char.ToUpperInvariant(text[0]) + text[1..];
        return text[^1] is '.' or '!' or '?' ? text : text + ".";
    }
}
