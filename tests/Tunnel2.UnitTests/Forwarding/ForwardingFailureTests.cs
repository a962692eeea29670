using Tunnel2.Protocol.Frames;
using Tunnel2.ProxyEntry.Problems;

namespace Tunnel2.UnitTests.Forwarding;

public sealed class ForwardingFailureTests
{
    [Theory]
    [InlineData(ProtocolErrorCode.BackendUnreachable, 502)]
    [InlineData(ProtocolErrorCode.BackendTimeout, 504)]
    [InlineData(ProtocolErrorCode.ResponseHeadTimeout, 504)]
    [InlineData(ProtocolErrorCode.Overloaded, 503)]
    [InlineData(ProtocolErrorCode.Draining, 503)]
    [InlineData(ProtocolErrorCode.RequestBodyTooLarge, 413)]
    [InlineData(ProtocolErrorCode.NoError, 502)]
    [InlineData(ProtocolErrorCode.ProtocolError, 502)]
    [InlineData(ProtocolErrorCode.Cancelled, 502)]
    [InlineData(ProtocolErrorCode.BackendAborted, 502)]
    [InlineData(ProtocolErrorCode.FlowControlError, 502)]
    [InlineData(ProtocolErrorCode.InternalError, 502)]
    [InlineData((ProtocolErrorCode)12345, 502)]
    public void Maps_each_reset_code_to_the_documented_status(ProtocolErrorCode code, int status)
    {
        ForwardingFailure failure = ForwardingFailure.FromResetCode(code);

        Assert.Equal(status, failure.Status);
        Assert.False(string.IsNullOrWhiteSpace(failure.Title));
        Assert.False(string.IsNullOrWhiteSpace(failure.Type));
        Assert.False(string.IsNullOrWhiteSpace(failure.Reason));
    }

    [Fact]
    public void Every_defined_code_maps_to_an_error_status()
    {
        foreach (ProtocolErrorCode code in Enum.GetValues<ProtocolErrorCode>())
        {
            Assert.InRange(ForwardingFailure.FromResetCode(code).Status, 400, 599);
        }
    }

    [Fact]
    public void Overloaded_and_draining_are_told_apart()
    {
        Assert.NotEqual(ForwardingFailure.FromResetCode(ProtocolErrorCode.Overloaded).Reason, ForwardingFailure.FromResetCode(ProtocolErrorCode.Draining).Reason);
        Assert.Equal(ForwardingFailure.ResponseTimeout, ForwardingFailure.FromResetCode(ProtocolErrorCode.BackendTimeout));
    }

    [Fact]
    public void The_fixed_failures_have_their_statuses()
    {
        Assert.Equal(502, ForwardingFailure.UplinkLost.Status);
        Assert.Equal(504, ForwardingFailure.ResponseTimeout.Status);
        Assert.Equal(431, ForwardingFailure.HeadersTooLarge.Status);
    }
}
