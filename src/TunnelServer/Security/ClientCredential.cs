using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.TunnelServer.Security;

/// <summary>A client's token, by its hash, and the sessions it may serve (ids or patterns such as <c>team-a-*</c>).</summary>
/// <param name="Name">What logs call it: the token itself is never written anywhere.</param>
public sealed record ClientCredential(string Name, byte[] TokenHash, IReadOnlyList<SessionPattern> Sessions)
{
    public bool MayServe(string session)
    {
        foreach (SessionPattern pattern in Sessions)
        {
            if (pattern.IsMatch(session))
            {
                return true;
            }
        }

        return false;
    }
}
