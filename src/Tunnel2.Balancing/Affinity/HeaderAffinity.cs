namespace Tunnel2.Balancing.Affinity;

/// <summary>A consistent (rendezvous) hash of a request header's value picks the member.</summary>
/// <param name="HeaderName">The header; empty only in settings that validation refuses.</param>
public sealed record HeaderAffinity(string HeaderName) : IAffinityPolicy
{
    public AffinityMode Mode => AffinityMode.Header;

    public string? KeyOf<TRequest>(in TRequest request)
        where TRequest : struct, IAffinityRequest => HeaderName.Length == 0 ? null : request.Header(HeaderName);

    public T? Find<T>(T[] members, string key, T? exclude, long now)
        where T : class, IBalancingMember => MemberPicker.Rendezvous(members, AffinityKeys.Hash(key), exclude, now);

    public string? CookieFor<TRequest>(in TRequest request, string? requestKey, IBalancingMember member)
        where TRequest : struct, IAffinityRequest => null;
}
