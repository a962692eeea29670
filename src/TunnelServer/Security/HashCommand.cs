using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.TunnelServer.Security;

/// <summary>
/// <c>TunnelServer hash-token</c> and <c>TunnelServer hash-password</c>: read a secret from standard input (one line, so
/// it stays out of the shell's history and the process list) and print what the credentials file stores for it.
/// </summary>
public static class HashCommand
{
    public static bool IsCommand(string[] args) => args is ["hash-token"] or ["hash-password"];

    public static int Run(string[] args, TextReader input, TextWriter output, TextWriter error)
    {
        string? secret = input.ReadLine();
        if (string.IsNullOrEmpty(secret))
        {
            error.WriteLine($"TunnelServer {args[0]}: give the secret on standard input, e.g. printf '%s\\n' \"$SECRET\" | TunnelServer {args[0]}");
            return 2;
        }

        if (args[0] == "hash-token" && secret.Length < 16)
        {
            error.WriteLine("TunnelServer hash-token: a token should be at least 16 random characters (e.g. openssl rand -base64 32).");
            return 2;
        }

        output.WriteLine(args[0] == "hash-token" ? TokenHash.Create(secret) : PasswordHash.Create(secret));
        return 0;
    }
}
