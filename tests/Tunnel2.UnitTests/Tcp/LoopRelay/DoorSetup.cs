namespace Tunnel2.UnitTests.Tcp.LoopRelay;

/// <summary>How a <see cref="LoopDoorHarness"/> is set up beyond its engine.</summary>
/// <param name="RefusingClient">A second client, whose target refuses every caller (never ejected: round robin sends it every other one).</param>
/// <param name="MaxConnections">The session's cap on open connections.</param>
internal sealed record DoorSetup(bool RefusingClient = false, int MaxConnections = 5000);
