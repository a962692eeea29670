namespace Tunnel2.TestBackend.Endpoints;

/// <summary>One route of the backend, as listed by <c>/loadtest/info</c> and <c>--help</c>.</summary>
public sealed record EndpointDescription(string Method, string Path, string Description);
