namespace Tunnel2.Balancing.Affinity;

/// <summary>No affinity: every request is the strategy's to place.</summary>
public sealed record NoAffinity : IAffinityPolicy
{
    public static readonly NoAffinity Instance = new();

    private NoAffinity()
    {
    }

    public AffinityMode Mode => AffinityMode.None;

    public string? KeyOf<TRequest>(in TRequest request)
        where TRequest : struct, IAffinityRequest => null;

    public T? Find<T>(T[] members, string key, T? exclude, long now)
        where T : class, IBalancingMember => null;

    public string? CookieFor<TRequest>(in TRequest request, string? requestKey, IBalancingMember member)
        where TRequest : struct, IAffinityRequest => null;
}
