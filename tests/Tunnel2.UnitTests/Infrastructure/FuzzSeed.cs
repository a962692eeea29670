using System.Globalization;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>Fixed seeds for the randomised tests; TUNNEL2_FUZZ_SEED overrides them to explore or reproduce.</summary>
internal static class FuzzSeed
{
    public static int Get(int fixedSeed) =>
        int.TryParse(Environment.GetEnvironmentVariable("TUNNEL2_FUZZ_SEED"), NumberStyles.Integer, CultureInfo.InvariantCulture, out int seed)
            ? seed
            : fixedSeed;
}
