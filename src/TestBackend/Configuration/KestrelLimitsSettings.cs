using System.Globalization;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Tunnel2.Hosting;

namespace Tunnel2.TestBackend.Configuration;

/// <summary>
/// The Kestrel limits the backend is tuned with, read from <c>Kestrel:Limits</c>.
/// The defaults here match appsettings.json so the app behaves the same when the file is absent
/// (for example when it is hosted in-process by a test project).
/// </summary>
internal sealed class KestrelLimitsSettings
{
    public const string SectionName = "Kestrel:Limits";

    public long MaxConcurrentConnections { get; init; } = 10_000;

    public long MaxConcurrentUpgradedConnections { get; init; } = 10_000;

    public TimeSpan KeepAliveTimeout { get; init; } = TimeSpan.FromMinutes(2);

    public long MaxRequestBufferSize { get; init; } = 1024 * 1024;

    public static KestrelLimitsSettings Load(IConfiguration configuration)
    {
        var section = configuration.GetSection(SectionName);
        var defaults = new KestrelLimitsSettings();
        var settings = new KestrelLimitsSettings
        {
            MaxConcurrentConnections = ReadPositive(section, nameof(MaxConcurrentConnections), defaults.MaxConcurrentConnections),
            MaxConcurrentUpgradedConnections = ReadPositive(section, nameof(MaxConcurrentUpgradedConnections), defaults.MaxConcurrentUpgradedConnections),
            KeepAliveTimeout = ReadTimeout(section, nameof(KeepAliveTimeout), defaults.KeepAliveTimeout),
            MaxRequestBufferSize = ReadPositive(section, nameof(MaxRequestBufferSize), defaults.MaxRequestBufferSize),
        };
        return settings;
    }

    public void ApplyTo(KestrelServerLimits limits)
    {
        limits.MaxConcurrentConnections = MaxConcurrentConnections;
        limits.MaxConcurrentUpgradedConnections = MaxConcurrentUpgradedConnections;
        limits.KeepAliveTimeout = KeepAliveTimeout;
        limits.MaxRequestBufferSize = MaxRequestBufferSize;
    }

    private static long ReadPositive(IConfigurationSection section, string key, long fallback)
    {
        var raw = section[key];
        if (string.IsNullOrWhiteSpace(raw))
        {
            return fallback;
        }

        if (!long.TryParse(raw, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var value) || value <= 0)
        {
            throw new InvalidConfigurationException(
                $"{SectionName}:{key} must be a positive whole number, got '{raw}'.");
        }

        return value;
    }

    private static TimeSpan ReadTimeout(IConfigurationSection section, string key, TimeSpan fallback)
    {
        var raw = section[key];
        if (string.IsNullOrWhiteSpace(raw))
        {
            return fallback;
        }

        if (!TimeSpan.TryParse(raw, CultureInfo.InvariantCulture, out var value) || value <= TimeSpan.Zero)
        {
            throw new InvalidConfigurationException(
                $"{SectionName}:{key} must be a positive time span such as 00:02:00, got '{raw}'.");
        }

        return value;
    }
}
