using System.Globalization;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary><c>TunnelServer:Tcp:PortRange</c>: <c>first-last</c> (or one port), both from 1 to 65535.</summary>
public readonly record struct TcpPortRange(int First, int Last)
{
    public int Count => Last - First + 1;

    public bool Contains(int port) => port >= First && port <= Last;

    public static bool TryParse(string? text, out TcpPortRange range, out string? error)
    {
        range = default;
        error = null;
        if (string.IsNullOrWhiteSpace(text))
        {
            error = "it is empty";
            return false;
        }

        string[] parts = text.Split('-', 2, StringSplitOptions.TrimEntries);
        if (!TryPort(parts[0], out int first) || !TryPort(parts.Length == 2 ? parts[1] : parts[0], out int last))
        {
            error = $"'{text}' is not first-last with ports from 1 to 65535 (e.g. 20000-20100)";
            return false;
        }

        if (last < first)
        {
            error = $"'{text}' ends before it starts";
            return false;
        }

        range = new TcpPortRange(first, last);
        return true;
    }

    private static bool TryPort(string text, out int port) =>
        int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out port) && port is >= 1 and <= 65535;
}
