namespace Tunnel2.Hosting;

/// <summary>A setting that is out of range or unreadable, found while the host is built; <see cref="ProgramHost"/> exits 2 with its message.</summary>
public sealed class InvalidConfigurationException(string message) : Exception(message);
