using System.ComponentModel.DataAnnotations;
using System.Globalization;

namespace Tunnel2.Hosting.Configuration;

/// <summary>A whole-number option that is either 0 (off: the system's own value) or between two bounds (inclusive).</summary>
[AttributeUsage(AttributeTargets.Property | AttributeTargets.Field | AttributeTargets.Parameter, AllowMultiple = false)]
public sealed class ZeroOrRangeAttribute : ValidationAttribute
{
    public ZeroOrRangeAttribute(int minimum, int maximum)
        : base("The field {0} must be 0 or between {1} and {2}.")
    {
        Minimum = minimum;
        Maximum = maximum;
    }

    public int Minimum { get; }

    public int Maximum { get; }

    public override bool IsValid(object? value) => value is not int number || number == 0 || (number >= Minimum && number <= Maximum);

    public override string FormatErrorMessage(string name) =>
        string.Format(CultureInfo.CurrentCulture, ErrorMessageString, name, Minimum, Maximum);
}
