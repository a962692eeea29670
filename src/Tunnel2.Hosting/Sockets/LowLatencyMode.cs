namespace Tunnel2.Hosting.Sockets;

/// <summary>
/// The opt-in low-latency mode (docs/running.md): started with <c>DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1</c>, the
/// runtime runs socket completions on its epoll threads, and Kestrel is asked to run what they start there too
/// (<c>UnsafePreferInlineScheduling</c>), so that one switch turns both on: either alone leaves a pool hand-off per step.
/// </summary>
public static class LowLatencyMode
{
    /// <summary>The runtime's own switch, read once at start as the runtime reads it.</summary>
    public const string Variable = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";

    public static bool IsOn { get; } = Environment.GetEnvironmentVariable(Variable) == "1";
}
