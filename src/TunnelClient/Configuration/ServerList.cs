using Tunnel2.Hosting;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>
/// <c>TunnelClient:Server</c>: one server's tunnel endpoint, or several separated by commas (<c>--server</c> given
/// several times), e.g. the nodes of a cluster behind one load balancer. The client keeps its uplinks to each of them.
/// </summary>
public static class ServerList
{
    /// <returns>The servers in the order given; null (and why in <paramref name="error"/>) when one is not an http(s) URL or repeats.</returns>
    public static IReadOnlyList<Uri>? Parse(string? value, out string? error)
    {
        var servers = new List<Uri>();
        foreach (string part in (value ?? "").Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
        {
            if (!HttpUrl.TryParse(part, out Uri? server))
            {
                error = $"'{part}' is not an http:// or https:// URL such as http://127.0.0.1:12001";
                return null;
            }

            foreach (Uri earlier in servers)
            {
                if (Uri.Compare(earlier, server, UriComponents.SchemeAndServer, UriFormat.Unescaped, StringComparison.OrdinalIgnoreCase) == 0)
                {
                    error = $"'{part}' is given twice";
                    return null;
                }
            }

            servers.Add(server);
        }

        error = servers.Count == 0 ? "no server given" : null;
        return servers.Count == 0 ? null : servers;
    }
}
