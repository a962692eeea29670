using System.Globalization;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>Reads samples out of a Prometheus text exposition, as a scraper would.</summary>
public static class PrometheusText
{
    /// <summary>
    /// The sum of the samples named <paramref name="name"/> whose labels include every one of <paramref name="labels"/>
    /// (<c>key="value"</c> each); null when there is none.
    /// </summary>
    public static double? Sum(string exposition, string name, params string[] labels)
    {
        double? sum = null;
        foreach (string line in exposition.Split('\n'))
        {
            if (line.StartsWith('#') || !line.StartsWith(name, StringComparison.Ordinal)
                || (line.Length > name.Length && line[name.Length] is not ('{' or ' ')))
            {
                continue;
            }

            int valueStart = line.LastIndexOf(' ') + 1;
            string labelPart = line[..valueStart];
            bool matches = true;
            foreach (string label in labels)
            {
                matches &= labelPart.Contains(label, StringComparison.Ordinal);
            }

            if (matches)
            {
                sum = (sum ?? 0) + double.Parse(line[valueStart..], NumberStyles.Float, CultureInfo.InvariantCulture);
            }
        }

        return sum;
    }
}
