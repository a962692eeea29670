namespace Tunnel2.TunnelClient.Diagnostics;

/// <summary>
/// Where callers reach the session, on a plain line of its own on standard output (no timestamp, no level), so a
/// person sees it among the logs and a script can <c>grep '^Forwarding '</c>: <c>Forwarding &lt;public URL&gt; -&gt; &lt;target&gt;</c>.
/// The same is logged at debug level for structured logs.
/// </summary>
internal static class ForwardingLine
{
    public static string Format(string publicAddress, string target) => $"Forwarding {publicAddress} -> {target}";

    public static void Write(string publicAddress, string target) => Console.Out.WriteLine(Format(publicAddress, target));
}
