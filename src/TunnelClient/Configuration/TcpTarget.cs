using System.Globalization;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>The <c>--tcp</c> target: <c>host:port</c>, <c>[v6]:port</c>, or a bare port (on 127.0.0.1).</summary>
public sealed record TcpTarget(string Host, int Port)
{
    public static TcpTarget? Parse(string? text, out string? error)
    {
        error = null;
        if (string.IsNullOrWhiteSpace(text))
        {
            error = "it is empty";
            return null;
        }

        text = text.Trim();
        if (TryPort(text, out int bare))
        {
            return new TcpTarget("127.0.0.1", bare);
        }

        if (Uri.TryCreate($"tcp://{text}", UriKind.Absolute, out Uri? parsed) && parsed.Port > 0 && parsed.AbsolutePath == "/"
            && string.IsNullOrEmpty(parsed.UserInfo) && text.EndsWith(parsed.Port.ToString(CultureInfo.InvariantCulture), StringComparison.Ordinal))
        {
            return new TcpTarget(parsed.IdnHost, parsed.Port);
        }

        error = $"'{text}' is not host:port (db.internal:5432, 127.0.0.1:6379, [::1]:22) or a port";
        return null;
    }

    public override string ToString() => Host.Contains(':', StringComparison.Ordinal) ? $"[{Host}]:{Port}" : $"{Host}:{Port}";

    private static bool TryPort(string text, out int port) =>
        int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out port) && port is >= 1 and <= 65535;
}
