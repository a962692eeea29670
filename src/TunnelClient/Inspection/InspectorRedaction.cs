namespace Tunnel2.TunnelClient.Inspection;

/// <summary>
/// The header fields whose values the inspector shows as <see cref="Placeholder"/> unless
/// <c>TunnelClient:Inspector:RevealSecrets</c> is on. The values are kept, so a replay as is still carries them, and an
/// edited replay that leaves a placeholder in place sends the original value.
/// </summary>
public static class InspectorRedaction
{
    public const string Placeholder = "[redacted]";

    private static readonly HashSet<string> SecretNames = new(StringComparer.OrdinalIgnoreCase)
    {
        "Authorization",
        "Proxy-Authorization",
        "Cookie",
        "Set-Cookie",
    };

    public static bool IsSecret(string name) => SecretNames.Contains(name);

    public static string Shown(string name, string value, bool reveal) => !reveal && IsSecret(name) ? Placeholder : value;
}
