using System.Globalization;
using Tunnel2.Hosting;

namespace Tunnel2.TunnelClient.Backends;

/// <summary>One backend the client relays to: its base URL and its share under weighted balancing.</summary>
public sealed record BackendAddress(Uri Url, int Weight)
{
    public const int MaxWeight = 100;

    /// <summary>Backends one client may have: a request remembers the ones it tried in one 64-bit mask.</summary>
    public const int MaxBackends = 64;

    /// <summary>
    /// Reads <c>TunnelClient:Backends:Urls</c>: one entry, or several separated by commas (a repeated <c>--backend</c> is joined so),
    /// each a base URL optionally followed by <c>weight=N</c> after a space, as nginx's upstream <c>server</c> lines:
    /// <c>http://127.0.0.1:8081, http://127.0.0.1:8082 weight=3</c>.
    /// </summary>
    /// <returns>The entries, or null with <paramref name="error"/> saying what is wrong.</returns>
    public static List<BackendAddress>? ParseList(string? value, out string? error)
    {
        error = null;
        var addresses = new List<BackendAddress>();
        foreach (string entry in (value ?? string.Empty).Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
        {
            string[] parts = entry.Split(' ', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);
            if (!HttpUrl.TryParse(parts[0], out Uri? url))
            {
                error = $"'{parts[0]}' is not an http:// or https:// URL.";
                return null;
            }

            int weight = 1;
            for (int i = 1; i < parts.Length; i++)
            {
                if (!parts[i].StartsWith("weight=", StringComparison.Ordinal)
                    || !int.TryParse(parts[i].AsSpan("weight=".Length), NumberStyles.None, CultureInfo.InvariantCulture, out weight)
                    || weight is < 1 or > MaxWeight)
                {
                    error = $"'{parts[i]}' after {parts[0]} is not weight=N with N from 1 to {MaxWeight}.";
                    return null;
                }
            }

            foreach (BackendAddress earlier in addresses)
            {
                if (earlier.Url == url)
                {
                    error = $"{url} is listed twice.";
                    return null;
                }
            }

            addresses.Add(new BackendAddress(url, weight));
        }

        if (addresses.Count > MaxBackends)
        {
            error = $"{addresses.Count} backends are given; one client takes at most {MaxBackends}.";
            return null;
        }

        if (addresses.Count == 0)
        {
            error = "no backend is given.";
            return null;
        }

        return addresses;
    }
}
