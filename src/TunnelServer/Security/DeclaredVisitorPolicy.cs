using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Http1;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.TunnelServer.Security;

/// <summary>
/// The visitor rules a client declares for its session at login (<see cref="HandshakeProtocol.VisitorBasicHeader"/> and
/// the allow and deny headers), as ngrok's <c>--basic-auth</c> and <c>--cidr-allow</c> do; each rule kind reads its own
/// headers (<see cref="VisitorRuleKinds.FromLogin"/>). They apply on top of the server's own rules for the session,
/// never instead of them.
/// </summary>
public static class DeclaredVisitorPolicy
{
    /// <returns>True with a null policy when the login declares none; false with the reason when a header is malformed.</returns>
    public static bool TryRead(Http1Head head, string session, out VisitorPolicy? policy, out string? problem)
    {
        policy = null;
        problem = null;
        var problems = new List<string>();
        List<IVisitorRule> rules = VisitorRuleKinds.FromLogin(name => head[name], problems);
        if (problems.Count > 0)
        {
            problem = string.Join(" ", problems);
            return false;
        }

        if (rules.Count == 0)
        {
            return true;
        }

        if (!SessionPattern.TryParse(session, out SessionPattern? exact, out problem))
        {
            return false;
        }

        policy = new VisitorPolicy(exact!, rules);
        return true;
    }
}
