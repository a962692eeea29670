namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// The visitor rules one session's requests and connections meet, in the documented order (docs/configuration.md,
/// "One session's settings"): the credentials file's entry for the session first, then what its client declared at
/// login, which can only add (a visitor passes both). Immutable: a reload of the file or a login makes a new one, and the
/// session's policy that holds it is swapped whole (<c>Sessions/SessionPolicies</c>).
/// </summary>
public sealed class SessionVisitorRules
{
    /// <summary>No rules: the session is open to every visitor.</summary>
    public static readonly SessionVisitorRules None = new(null, null);

    public SessionVisitorRules(VisitorPolicy? fromFile, VisitorPolicy? declared)
    {
        FromFile = fromFile;
        Declared = declared;
    }

    /// <summary>The credentials file's entry that names the session, exactly or by the best pattern; null for none.</summary>
    public VisitorPolicy? FromFile { get; }

    /// <summary>What the session's client declared at its latest login; null for none.</summary>
    public VisitorPolicy? Declared { get; }

    public bool IsEmpty => FromFile is null && Declared is null;

    /// <summary>
    /// A raw TCP caller (which can carry no credentials) meets the address rules alone:
    /// <see cref="VisitorVerdict.Allowed"/>, <see cref="VisitorVerdict.AddressDenied"/> for this
    /// <paramref name="remote"/>, or <see cref="VisitorVerdict.CredentialsMissing"/> when a rule asks who the visitor is:
    /// then the session takes no TCP caller at all, closed rather than left open.
    /// </summary>
    public VisitorVerdict CheckTcpCaller(System.Net.IPAddress? remote)
    {
        foreach (VisitorPolicy? policy in (ReadOnlySpan<VisitorPolicy?>)[FromFile, Declared])
        {
            if (policy is null)
            {
                continue;
            }

            if (!policy.AllowsAddress(remote))
            {
                return VisitorVerdict.AddressDenied;
            }

            if (policy.WantsCredentials)
            {
                return VisitorVerdict.CredentialsMissing;
            }
        }

        return VisitorVerdict.Allowed;
    }
}
