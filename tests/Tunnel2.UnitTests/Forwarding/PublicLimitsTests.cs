using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Heads;
using Tunnel2.ProxyEntry.Problems;

namespace Tunnel2.UnitTests.Forwarding;

/// <summary>The request-header size ProxyEntry compares with MaxRequestHeadersBytes, and the public drain's bookkeeping.</summary>
public sealed class PublicLimitsTests
{
    [Fact]
    public void Header_size_counts_name_value_separator_and_line_end_per_value()
    {
        var context = new DefaultHttpContext();
        context.Request.Headers["Host"] = "example";           // 4 + 7 + 4, counted although not forwarded
        context.Request.Headers["X-Many"] = new(["a", "bcd"]); // (6 + 1 + 4) + (6 + 3 + 4)

        RequestHeadBuilder.Build(context, "/", "/session/s", out long withHeaders, out _);
        RequestHeadBuilder.Build(new DefaultHttpContext(), "/", "/session/s", out long withoutHeaders, out _);

        Assert.Equal(15 + 11 + 13, withHeaders);
        Assert.Equal(0, withoutHeaders);
    }

    [Fact]
    public async Task The_public_drain_waits_for_requests_in_flight()
    {
        var drain = new PublicDrain();
        drain.RequestStarted();
        drain.Begin();

        Assert.True(drain.IsDraining);
        Assert.False(await drain.WaitIdleAsync(TimeSpan.FromMilliseconds(50)));

        Task<bool> idle = drain.WaitIdleAsync(TimeSpan.FromSeconds(10));
        drain.RequestEnded();

        Assert.True(await idle.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.Equal(0, drain.InFlight);
    }

    [Fact]
    public void Stream_limit_and_server_draining_answer_503_told_apart()
    {
        Assert.Equal(StatusCodes.Status503ServiceUnavailable, ForwardingFailure.StreamLimit.Status);
        Assert.Equal(StatusCodes.Status503ServiceUnavailable, ForwardingFailure.ServerDraining.Status);
        Assert.NotEqual(ForwardingFailure.StreamLimit.Reason, ForwardingFailure.ServerDraining.Reason);
    }
}
