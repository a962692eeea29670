namespace Tunnel2.Balancing.Affinity;

/// <summary>
/// A cookie names the member (its <see cref="IBalancingMember.AffinityKey"/>). A caller without it, or whose member is
/// gone or cannot take the request, is placed by the strategy, and the answer gives it the cookie of the member that answered.
/// </summary>
public sealed record CookieAffinity(string CookieName) : IAffinityPolicy
{
    public AffinityMode Mode => AffinityMode.Cookie;

    public string? KeyOf<TRequest>(in TRequest request)
        where TRequest : struct, IAffinityRequest => request.Cookie(CookieName);

    public T? Find<T>(T[] members, string key, T? exclude, long now)
        where T : class, IBalancingMember => MemberPicker.ByAffinityKey(members, key, exclude, now);

    public string? CookieFor<TRequest>(in TRequest request, string? requestKey, IBalancingMember member)
        where TRequest : struct, IAffinityRequest =>
        requestKey == member.AffinityKey ? null : AffinityCookie.Format(CookieName, member.AffinityKey, request.CookiePath, request.IsHttps);
}
