using System.ComponentModel.DataAnnotations;
using Tunnel2.Protocol.Buffers;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelServer.Configuration;

namespace Tunnel2.UnitTests.Configuration;

/// <summary>TunnelServer:Uplink:BufferTrimPeriod and TunnelClient:Uplink:BufferTrimPeriod: the pools' 10 s by default, range checked.</summary>
public sealed class BufferTrimPeriodTests
{
    [Fact]
    public void Both_default_to_the_pools_own_period_of_10_seconds()
    {
        Assert.Equal(TimeSpan.FromSeconds(10), BufferPools.DefaultTrimPeriod);
        Assert.Equal(BufferPools.DefaultTrimPeriod, new ServerUplinkOptions().BufferTrimPeriod);
        Assert.Equal(BufferPools.DefaultTrimPeriod, new ClientUplinkOptions().BufferTrimPeriod);
    }

    [Theory]
    [InlineData("00:00:00.100", true)]
    [InlineData("00:00:01", true)]
    [InlineData("01:00:00", true)]
    [InlineData("00:00:00.050", false)]
    [InlineData("00:00:00", false)]
    [InlineData("01:00:01", false)]
    public void Both_are_range_checked(string value, bool valid)
    {
        TimeSpan period = TimeSpan.Parse(value, System.Globalization.CultureInfo.InvariantCulture);
        Assert.Equal(valid, IsValid(new ServerUplinkOptions { BufferTrimPeriod = period }));
        Assert.Equal(valid, IsValid(new ClientUplinkOptions { BufferTrimPeriod = period }));
    }

    [Fact]
    public void The_pools_refuse_a_period_that_is_not_positive() =>
        Assert.Throws<ArgumentOutOfRangeException>(() => BufferPools.SetTrimPeriod(TimeSpan.Zero));

    private static bool IsValid(object options) =>
        Validator.TryValidateObject(options, new ValidationContext(options), [], validateAllProperties: true);
}
