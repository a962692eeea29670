using System.ComponentModel.DataAnnotations;
using Tunnel2.Hosting.Configuration;

namespace Tunnel2.UnitTests.Configuration;

public sealed class TimeSpanRangeAttributeTests
{
    private static readonly TimeSpanRangeAttribute Range = new("00:00:00.100", "01:00:00");

    [Theory]
    [InlineData(100, true)]
    [InlineData(99, false)]
    [InlineData(3_600_000, true)]
    [InlineData(3_600_001, false)]
    [InlineData(0, false)]
    [InlineData(-1, false)]
    public void Both_bounds_are_inclusive(int milliseconds, bool valid)
    {
        Assert.Equal(valid, Range.IsValid(TimeSpan.FromMilliseconds(milliseconds)));
    }

    [Fact]
    public void The_bounds_are_read_as_invariant_time_spans()
    {
        Assert.Equal(TimeSpan.FromMilliseconds(100), Range.Minimum);
        Assert.Equal(TimeSpan.FromHours(1), Range.Maximum);
    }

    [Fact]
    public void The_message_names_the_field_and_both_bounds()
    {
        Assert.Equal("The field KeepAliveInterval must be between 00:00:00.100 and 01:00:00.",
            Range.FormatErrorMessage("KeepAliveInterval"));
    }

    [Fact]
    public void A_missing_value_is_left_to_Required()
    {
        Assert.True(Range.IsValid(null));
    }

    [Fact]
    public void Bounds_that_are_not_time_spans_fail_when_the_attribute_is_made()
    {
        Assert.Throws<FormatException>(() => new TimeSpanRangeAttribute("soon", "01:00:00"));
    }

    [Fact]
    public void A_custom_message_is_kept()
    {
        var range = new TimeSpanRangeAttribute("00:00:00", "00:00:01") { ErrorMessage = "too long" };

        Assert.Equal("too long", range.GetValidationResult(TimeSpan.FromSeconds(2), new ValidationContext(new object()))!.ErrorMessage);
    }
}
