using System.Collections.Concurrent;
using System.Security.Cryptography;
using System.Text;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// Visitors' passwords, stored as bcrypt hashes (<c>$2y$…</c> from <c>htpasswd -nbB user password</c>, or
/// <c>TunnelServer hash-password</c>). bcrypt is slow on purpose (tens of milliseconds), too slow to pay on every request
/// of a page, so a password that verified once is remembered, as a keyed hash of user and password, until the
/// credentials change; a wrong one always pays the full price, and failures are rate limited per address.
/// </summary>
public sealed class PasswordHash
{
    /// <summary>bcrypt's cost for new hashes: 2^10 rounds, ~50 ms on a small server core.</summary>
    public const int DefaultWorkFactor = 10;

    /// <summary>
    /// The highest cost taken: 2^12 rounds, ~250 ms a check here. A hash may come from a client's login, and a cost of
    /// 31 would make every check of it take hours of the server's CPU.
    /// </summary>
    public const int MaxWorkFactor = 12;

    private const int MaxRemembered = 10_000;

    // Per-process key: what is remembered is useless outside this process.
    private static readonly byte[] RememberKey = RandomNumberGenerator.GetBytes(32);

    private readonly string _hash;
    private readonly ConcurrentDictionary<string, bool> _verified = new(StringComparer.Ordinal);

    private PasswordHash(string hash) => _hash = hash;

    public static string Create(string password, int workFactor = DefaultWorkFactor) =>
        BCrypt.Net.BCrypt.HashPassword(password, workFactor);

    /// <summary>
    /// A bcrypt hash in the modular crypt format: <c>$2a$</c>, <c>$2b$</c> or <c>$2y$</c>, a cost of 04 to
    /// <see cref="MaxWorkFactor"/>, 53 characters of salt and hash.
    /// </summary>
    public static bool TryParse(string? text, out PasswordHash? hash)
    {
        hash = null;
        if (text is not { Length: 60 } || !(text.StartsWith("$2a$", StringComparison.Ordinal) || text.StartsWith("$2b$", StringComparison.Ordinal)
                                             || text.StartsWith("$2y$", StringComparison.Ordinal)) || text[6] != '$'
            || !int.TryParse(text.AsSpan(4, 2), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int cost)
            || cost is < 4 or > MaxWorkFactor)
        {
            return false;
        }

        hash = new PasswordHash(text);
        return true;
    }

    /// <summary>Whether this user and password verified before (no bcrypt run, no attempt counted).</summary>
    public bool IsRemembered(string user, string password) => _verified.ContainsKey(RememberKeyOf(user, password));

    /// <summary>Runs bcrypt; a match is remembered until the credentials change.</summary>
    public bool Verify(string user, string password)
    {
        string remembered = RememberKeyOf(user, password);
        if (_verified.ContainsKey(remembered))
        {
            return true;
        }

        bool valid;
        try
        {
            valid = BCrypt.Net.BCrypt.Verify(password, _hash);
        }
        catch (BCrypt.Net.SaltParseException)
        {
            valid = false;
        }

        if (valid)
        {
            if (_verified.Count >= MaxRemembered)
            {
                _verified.Clear();
            }

            _verified.TryAdd(remembered, true);
        }

        return valid;
    }

    private static string RememberKeyOf(string user, string password) =>
        Convert.ToBase64String(HMACSHA256.HashData(RememberKey, Encoding.UTF8.GetBytes(user + "\0" + password)));
}
