using System.Reflection;

namespace Tunnel2.Hosting;

/// <summary>
/// The release's version, set once in <c>Directory.Build.props</c> (<c>&lt;Version&gt;</c>) and carried by every
/// assembly as its informational version: <c>--version</c>, the admin API and the dashboard read it here.
/// </summary>
public static class ProductVersion
{
    /// <summary>The version of <paramref name="assembly"/> without the build's <c>+commit</c> suffix (e.g. <c>0.2.0</c>).</summary>
    public static string Of(Assembly assembly) =>
        Strip(assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion) ?? "unknown";

    /// <summary><c>0.2.0+4f5d1df…</c> → <c>0.2.0</c>: the source revision stays in the assembly, the user sees the release.</summary>
    public static string? Strip(string? informationalVersion) =>
        informationalVersion is null ? null
        : informationalVersion.IndexOf('+', StringComparison.Ordinal) is var plus and >= 0 ? informationalVersion[..plus]
        : informationalVersion;
}
