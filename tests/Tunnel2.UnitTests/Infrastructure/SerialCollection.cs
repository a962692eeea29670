namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>
/// Tests that burn CPU for a while (fuzzing) or that measure time (keep-alive) run alone, so that on a small machine
/// one cannot starve the other's timers.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class SerialCollection
{
    public const string Name = "Serial: CPU-bound or timing-sensitive";
}
