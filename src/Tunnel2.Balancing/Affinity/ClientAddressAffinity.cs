namespace Tunnel2.Balancing.Affinity;

/// <summary>A consistent (rendezvous) hash of the caller's IP address, as the server saw it, picks the member.</summary>
public sealed record ClientAddressAffinity : IAffinityPolicy
{
    public static readonly ClientAddressAffinity Instance = new();

    private ClientAddressAffinity()
    {
    }

    public AffinityMode Mode => AffinityMode.ClientIp;

    public string? KeyOf<TRequest>(in TRequest request)
        where TRequest : struct, IAffinityRequest => request.ClientAddress();

    public T? Find<T>(T[] members, string key, T? exclude, long now)
        where T : class, IBalancingMember => MemberPicker.Rendezvous(members, AffinityKeys.Hash(key), exclude, now);

    public string? CookieFor<TRequest>(in TRequest request, string? requestKey, IBalancingMember member)
        where TRequest : struct, IAffinityRequest => null;
}
