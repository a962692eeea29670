namespace Tunnel2.Balancing;

/// <summary>
/// One way of keeping a caller on the same member (YARP's <c>ISessionAffinityPolicy</c>): which value of the request is
/// its key, which member that key leads to, and whether the answer must carry a cookie naming the member. The server
/// uses them for the clients of a session, a client for its backends; <see cref="Affinity.AffinityPolicy.For"/> makes one from
/// the configured <see cref="AffinityMode"/>. Policies are records, so two made from the same settings are equal.
/// </summary>
public interface IAffinityPolicy
{
    AffinityMode Mode { get; }

    /// <summary>The request's affinity key under this policy; null when it carries none.</summary>
    string? KeyOf<TRequest>(in TRequest request)
        where TRequest : struct, IAffinityRequest;

    /// <summary>The member <paramref name="key"/> leads to when that member can take a request now; null leaves the pick to the strategy.</summary>
    T? Find<T>(T[] members, string key, T? exclude, long now)
        where T : class, IBalancingMember;

    /// <summary>
    /// The <c>Set-Cookie</c> value an answer from <paramref name="member"/> carries so that the caller's next request
    /// comes back to it; null when none is needed (no cookie affinity, or the caller's cookie names it already).
    /// </summary>
    /// <param name="requestKey">The request's own key (<see cref="KeyOf"/>).</param>
    string? CookieFor<TRequest>(in TRequest request, string? requestKey, IBalancingMember member)
        where TRequest : struct, IAffinityRequest;
}
