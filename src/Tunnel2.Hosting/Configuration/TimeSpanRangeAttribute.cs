using System.ComponentModel.DataAnnotations;
using System.Globalization;

namespace Tunnel2.Hosting.Configuration;

/// <summary>
/// A <see cref="TimeSpan"/> option between two bounds (inclusive), written as "hh:mm:ss[.fff]".
/// </summary>
/// <remarks>
/// <c>[Range(typeof(TimeSpan), …)]</c> converts its bounds through a TypeConverter found by reflection, which a
/// trimmed or Native AOT build cannot promise to keep; this attribute parses them itself, so the options of both
/// hosts validate the same way in every build.
/// </remarks>
[AttributeUsage(AttributeTargets.Property | AttributeTargets.Field | AttributeTargets.Parameter, AllowMultiple = false)]
public sealed class TimeSpanRangeAttribute : ValidationAttribute
{
    private readonly string _minimumText;
    private readonly string _maximumText;

    public TimeSpanRangeAttribute(string minimum, string maximum)
        : base("The field {0} must be between {1} and {2}.")
    {
        Minimum = TimeSpan.Parse(minimum, CultureInfo.InvariantCulture);
        Maximum = TimeSpan.Parse(maximum, CultureInfo.InvariantCulture);
        _minimumText = minimum;
        _maximumText = maximum;
    }

    public TimeSpan Minimum { get; }

    public TimeSpan Maximum { get; }

    public override bool IsValid(object? value) =>
        value is not TimeSpan span || (span >= Minimum && span <= Maximum); // null is [Required]'s business, as with [Range]

    public override string FormatErrorMessage(string name) =>
        string.Format(CultureInfo.CurrentCulture, ErrorMessageString, name, _minimumText, _maximumText); // as written, like [Range]
}
