namespace Tunnel2.ProxyEntry.Access;

/// <summary>Why a token was refused (<see cref="TokenProblem.Of"/>), told to the visitor and, with advice, to the operator.</summary>
/// <param name="Reason">A short name for the log (<c>expired</c>, <c>wrong-issuer</c>, …).</param>
/// <param name="Detail">What the visitor is told, in the 401's detail and its challenge.</param>
/// <param name="Advice">What the operator may do, for the log.</param>
internal readonly record struct TokenRefusal(string Reason, string Detail, string Advice);
