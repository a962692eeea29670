namespace Tunnel2.TestBackend.Configuration;

/// <summary>Thrown by <see cref="TestBackendApp.Create"/> when a setting is out of range or unreadable.</summary>
public sealed class InvalidConfigurationException(string message) : Exception(message);
