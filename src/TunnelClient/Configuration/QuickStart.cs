using System.Security.Cryptography;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>
/// The short form for the common case, in the spirit of <c>ngrok http 8080</c>: <c>tunnel2 http 8080 --server …
/// --token …</c> serves a backend on this machine's port 8080 (or <c>host:port</c>, or a URL) under a session it makes
/// up when none is given; the client logs the public URL once logged in ("Forwarding … -> …").
/// </summary>
public static class QuickStart
{
    public const string Command = "http";

    /// <summary><c>tunnel2 tcp 5432</c>: the same for a raw TCP service, exposed on a public TCP port of the session.</summary>
    public const string TcpCommand = "tcp";

    private const string SessionAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";

    /// <summary>The arguments with <c>http &lt;target&gt;</c> turned into <c>--backend &lt;url&gt;</c> (and a made-up <c>--session</c>); other command lines unchanged.</summary>
    /// <param name="sessionFromEnvironment">Whether the environment names the session already (<c>TunnelClient__Session</c>).</param>
    public static string[] Expand(string[] args, bool sessionFromEnvironment)
    {
        if (args.Length == 0 || args[0] is not (Command or TcpCommand))
        {
            return args;
        }

        bool tcp = args[0] == TcpCommand;
        var expanded = new List<string>(args.Length + 3) { tcp ? "--tcp" : "--backend" };
        int rest = 1;
        if (args.Length > 1 && !args[1].StartsWith('-'))
        {
            expanded.Add(tcp ? args[1] : BackendUrl(args[1]));
            rest = 2;
        }

        expanded.AddRange(args[rest..]);
        if (!sessionFromEnvironment && !NamesSession(args))
        {
            expanded.Add("--session");
            expanded.Add(NewSessionId());
        }

        return [.. expanded];
    }

    /// <summary><c>8080</c> → <c>http://127.0.0.1:8080</c>; <c>host:8080</c> → <c>http://host:8080</c>; a URL as it is.</summary>
    public static string BackendUrl(string target)
    {
        if (target.Contains("://", StringComparison.Ordinal))
        {
            return target;
        }

        return int.TryParse(target, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out _)
            ? $"http://127.0.0.1:{target}"
            : $"http://{target}";
    }

    /// <summary>Ten random letters and digits: hard to guess, easy to read out.</summary>
    public static string NewSessionId() => RandomNumberGenerator.GetString(SessionAlphabet, 10);

    private static bool NamesSession(string[] args)
    {
        foreach (string argument in args)
        {
            if (argument is "--session" || argument.StartsWith("--session=", StringComparison.Ordinal)
                || argument.StartsWith("--TunnelClient:Session", StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        return false;
    }
}
