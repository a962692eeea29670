using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Options;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// Options that never change, for a handler made by hand (<see cref="OidcDoor"/>): the login's handlers take their
/// options from a monitor, and each session's are built once, outside the host's options system.
/// </summary>
internal sealed class FixedOptions<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicParameterlessConstructor)] T>(T value)
    : IOptionsMonitor<T>
{
    public T CurrentValue => value;

    public T Get(string? name) => value;

    public IDisposable? OnChange(Action<T, string?> listener) => null;
}
