using Tunnel2.Protocol.Handshake;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.TunnelServer.Security;

/// <summary>
/// What a credentials file holds (docs/security.md has a full example):
/// <code>
/// {
///   "Clients": [ { "Name": "team-a", "TokenHash": "sha256:…", "Sessions": [ "team-a-*" ] } ],
///   "Visitors": [ { "Sessions": "team-a-*", "Users": { "alice": "$2y$10$…" }, "ApiKeys": [ "sha256:…" ],
///                   "Allow": [ "10.0.0.0/8", "2001:db8::/32" ], "Deny": [ "10.9.9.9/32" ] } ]
/// }
/// </code>
/// </summary>
public sealed class Credentials
{
    public static readonly Credentials Empty = new([], VisitorPolicies.None);

    public Credentials(IReadOnlyList<ClientCredential> clients, VisitorPolicies visitors, IReadOnlyDictionary<string, int>? tcpPorts = null)
    {
        Clients = clients;
        Visitors = visitors;
        TcpPorts = tcpPorts ?? new Dictionary<string, int>(StringComparer.Ordinal);
    }

    /// <summary>
    /// <c>"TcpPorts": { "session-id": 5432 }</c>: the public TCP port a session always gets (docs/tcp.md), inside or
    /// outside <c>TunnelServer:Tcp:PortRange</c>.
    /// </summary>
    public IReadOnlyDictionary<string, int> TcpPorts { get; }

    public IReadOnlyList<ClientCredential> Clients { get; }

    public VisitorPolicies Visitors { get; }

    /// <summary>Reads the file's JSON; every mistake in it is listed, with where it is.</summary>
    /// <exception cref="InvalidDataException">The file is not JSON, or an entry is wrong; the message lists them all.</exception>
    public static Credentials Parse(Stream json)
    {
        IConfigurationRoot root = ReadJson(json);
        var problems = new List<string>();
        List<ClientCredential> clients = ParseClients(root.GetSection("Clients"), problems);
        List<VisitorPolicy> visitors = ParseVisitors(root.GetSection("Visitors"), problems);
        Dictionary<string, int> tcpPorts = ParseTcpPorts(root.GetSection("TcpPorts"), problems);
        var policies = new VisitorPolicies(visitors);
        foreach (string tcpSession in tcpPorts.Keys)
        {
            if (policies.For(tcpSession) is { HasLogin: true } login)
            {
                problems.Add($"Visitors ({login.Sessions.Text}): an Oidc login cannot guard session '{tcpSession}', which takes raw TCP callers (TcpPorts): " +
                    "a TCP caller cannot follow a browser login. Give the TCP session an entry of its own (Allow/Deny), or leave it out of TcpPorts.");
            }
        }

        return problems.Count == 0 ? new Credentials(clients, policies, tcpPorts) : throw new InvalidDataException(string.Join(" ", problems));
    }

    private static IConfigurationRoot ReadJson(Stream json)
    {
        try
        {
            return new ConfigurationBuilder().AddJsonStream(json).Build();
        }
        catch (Exception ex) when (ex is FormatException or System.Text.Json.JsonException)
        {
            throw new InvalidDataException($"not valid JSON: {ex.Message}");
        }
    }

    private static List<ClientCredential> ParseClients(IConfigurationSection section, List<string> problems)
    {
        var clients = new List<ClientCredential>();
        var names = new HashSet<string>(StringComparer.Ordinal);
        foreach (IConfigurationSection entry in section.GetChildren())
        {
            string where = $"Clients[{entry.Key}]";
            string? name = entry["Name"];
            if (string.IsNullOrWhiteSpace(name) || !names.Add(name))
            {
                problems.Add($"{where}: Name is missing or used twice; every client entry needs a name of its own.");
                continue;
            }

            where = $"Clients[{entry.Key}] ({name})";
            if (!TokenHash.TryParse(entry["TokenHash"], out byte[] hash))
            {
                problems.Add($"{where}: TokenHash must be 'sha256:' and 64 hex digits (make one with: TunnelServer hash-token).");
            }

            List<SessionPattern> sessions = Patterns(entry.GetSection("Sessions"), where, problems);
            if (sessions.Count == 0)
            {
                problems.Add($"{where}: Sessions must name at least one session id or pattern.");
            }

            clients.Add(new ClientCredential(name, hash, sessions));
        }

        return clients;
    }

    private static List<VisitorPolicy> ParseVisitors(IConfigurationSection section, List<string> problems)
    {
        var visitors = new List<VisitorPolicy>();
        var covered = new HashSet<string>(StringComparer.Ordinal);
        foreach (IConfigurationSection entry in section.GetChildren())
        {
            string where = $"Visitors[{entry.Key}]";
            if (!SessionPattern.TryParse(entry["Sessions"], out SessionPattern? pattern, out string? error))
            {
                problems.Add($"{where}: Sessions: {error}");
                continue;
            }

            where = $"Visitors[{entry.Key}] ({pattern!.Text})";
            if (!covered.Add(pattern.Text))
            {
                problems.Add($"{where}: another entry has the same Sessions.");
            }

            visitors.Add(new VisitorPolicy(pattern, VisitorRuleKinds.FromFile(entry, where, problems)));
        }

        return visitors;
    }

    private static Dictionary<string, int> ParseTcpPorts(IConfigurationSection section, List<string> problems)
    {
        var ports = new Dictionary<string, int>(StringComparer.Ordinal);
        var taken = new Dictionary<int, string>();
        foreach (IConfigurationSection entry in section.GetChildren())
        {
            if (!HandshakeProtocol.IsValidSessionId(entry.Key))
            {
                problems.Add($"TcpPorts: '{entry.Key}' is not a session id (1 to 128 characters of A-Z a-z 0-9 - _ . ~).");
            }
            else if (!int.TryParse(entry.Value, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int port)
                     || port is < 1 or > 65535)
            {
                problems.Add($"TcpPorts:{entry.Key} must be a port number from 1 to 65535, not '{entry.Value}'.");
            }
            else if (!taken.TryAdd(port, entry.Key))
            {
                problems.Add($"TcpPorts:{entry.Key}: port {port} is already session '{taken[port]}''s.");
            }
            else
            {
                ports[entry.Key] = port;
            }
        }

        return ports;
    }

    private static List<SessionPattern> Patterns(IConfigurationSection section, string where, List<string> problems)
    {
        var patterns = new List<SessionPattern>();
        foreach (IConfigurationSection item in section.GetChildren())
        {
            if (SessionPattern.TryParse(item.Value, out SessionPattern? pattern, out string? error))
            {
                patterns.Add(pattern!);
            }
            else
            {
                problems.Add($"{where}: Sessions: {error}");
            }
        }

        return patterns;
    }
}
