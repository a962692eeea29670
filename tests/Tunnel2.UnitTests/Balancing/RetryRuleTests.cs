using Tunnel2.Balancing.Retry;

namespace Tunnel2.UnitTests.Balancing;

/// <summary>"Idempotent method, no body, nothing answered yet: another member may be tried", the rule both sides share.</summary>
public sealed class RetryRuleTests
{
    [Theory]
    [InlineData("GET")]
    [InlineData("POST")]
    [InlineData("PATCH")]
    public void A_request_that_reached_no_backend_may_go_to_another_member_whatever_its_method(string method)
    {
        Assert.True(RetryRule.MayTryAnother(AttemptFailure.NotDelivered, method, bodySent: false, isUpgrade: false));
        Assert.True(RetryRule.MayTryAnother(AttemptFailure.NotDelivered, method, bodySent: false, isUpgrade: true));
    }

    [Theory]
    [InlineData(AttemptFailure.NotDelivered)]
    [InlineData(AttemptFailure.Unanswered)]
    public void A_request_whose_body_was_spent_is_never_tried_again(AttemptFailure failure)
    {
        Assert.False(RetryRule.MayTryAnother(failure, "PUT", bodySent: true, isUpgrade: false));
    }

    [Fact]
    public void A_request_a_backend_may_have_seen_goes_again_only_when_idempotent_bodiless_and_no_upgrade()
    {
        Assert.True(RetryRule.MayTryAnother(AttemptFailure.Unanswered, "GET", bodySent: false, isUpgrade: false));
        Assert.True(RetryRule.MayTryAnother(AttemptFailure.Unanswered, "DELETE", bodySent: false, isUpgrade: false));
        Assert.False(RetryRule.MayTryAnother(AttemptFailure.Unanswered, "POST", bodySent: false, isUpgrade: false));
        Assert.False(RetryRule.MayTryAnother(AttemptFailure.Unanswered, "GET", bodySent: false, isUpgrade: true));
    }

    [Theory]
    [InlineData("GET", true)]
    [InlineData("HEAD", true)]
    [InlineData("OPTIONS", true)]
    [InlineData("TRACE", true)]
    [InlineData("PUT", true)]
    [InlineData("DELETE", true)]
    [InlineData("POST", false)]
    [InlineData("PATCH", false)]
    [InlineData("CONNECT", false)]
    [InlineData("LOCK", false)]
    [InlineData("get", false)] // methods are case-sensitive (RFC 9110 §9.1): "get" is some other method
    public void Only_the_methods_rfc_9110_calls_idempotent_may_be_sent_again(string method, bool idempotent)
    {
        Assert.Equal(idempotent, RetryRule.IsIdempotentMethod(method));
    }
}
