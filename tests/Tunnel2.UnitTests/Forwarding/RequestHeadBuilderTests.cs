using System.Net;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Tunnel2.Protocol.Heads;
using Tunnel2.ProxyEntry.Heads;

namespace Tunnel2.UnitTests.Forwarding;

public sealed class RequestHeadBuilderTests
{
    private static DefaultHttpContext Context(Action<HttpRequest>? configure = null)
    {
        var context = new DefaultHttpContext();
        context.Request.Method = "POST";
        context.Request.Scheme = "http";
        context.Request.Host = new HostString("public.example:12000");
        context.Connection.RemoteIpAddress = IPAddress.Parse("203.0.113.7");
        configure?.Invoke(context.Request);
        return context;
    }

    [Fact]
    public void Carries_method_target_and_end_to_end_headers_in_order_with_repeats()
    {
        DefaultHttpContext context = Context(r =>
        {
            r.Headers.ContentType = "application/json";
            r.Headers.Append("X-Multi", "one");
            r.Headers.Append("X-Multi", "two");
        });

        RequestHead head = RequestHeadBuilder.Build(context, "/x?y=1", "/session/abc");

        Assert.Equal("POST", head.Method);
        Assert.Equal("/x?y=1", head.Target);
        Assert.Contains(new HeaderField("Content-Type", "application/json"), head.Headers);
        Assert.Equal(["one", "two"], head.Headers.Where(h => h.Name == "X-Multi").Select(h => h.Value));
    }

    [Fact]
    public void Drops_hop_by_hop_headers_host_and_headers_named_by_connection()
    {
        DefaultHttpContext context = Context(r =>
        {
            r.Headers.Connection = "keep-alive, X-Private";
            r.Headers["Keep-Alive"] = "timeout=5";
            r.Headers["TE"] = "trailers";
            r.Headers["Transfer-Encoding"] = "chunked";
            r.Headers["Upgrade"] = "websocket";
            r.Headers["Proxy-Authorization"] = "Basic x";
            r.Headers["X-Private"] = "secret";
            r.Headers["X-Public"] = "ok";
        });

        RequestHead head = RequestHeadBuilder.Build(context, "/", "/session/abc");

        string[] names = head.Headers.Select(h => h.Name).ToArray();
        Assert.DoesNotContain(names, n => HopByHopHeaders.Contains(n));
        Assert.DoesNotContain("Host", names, StringComparer.OrdinalIgnoreCase);
        Assert.DoesNotContain("X-Private", names);
        Assert.Contains("X-Public", names);
    }

    [Fact]
    public void Replaces_the_callers_X_Forwarded_headers_with_its_own_and_drops_the_forwarded_headers_middlewares_X_Original_ones()
    {
        DefaultHttpContext context = Context(r =>
        {
            r.Headers["X-Forwarded-For"] = "10.9.9.9";
            r.Headers["x-forwarded-proto"] = "gopher";
            r.Headers["X-Forwarded-Host"] = "spoofed";
            r.Headers["X-Forwarded-Prefix"] = "/spoofed";
            r.Headers["X-Forwarded-Other"] = "kept";
            r.Headers["X-Original-For"] = "127.0.0.250:39293"; // what ASP.NET Core's middleware keeps of what it replaced
            r.Headers["x-original-proto"] = "http";
            r.Headers["X-Original-Host"] = "edge.internal";
            r.Headers["X-Original-Prefix"] = "/";
            r.Headers["X-Original-Other"] = "kept";
        });

        RequestHead head = RequestHeadBuilder.Build(context, "/", "/session/abc");

        Assert.Equal("203.0.113.7", Single(head, "X-Forwarded-For"));
        Assert.Equal("http", Single(head, "X-Forwarded-Proto"));
        Assert.Equal("public.example:12000", Single(head, "X-Forwarded-Host"));
        Assert.Equal("/session/abc", Single(head, "X-Forwarded-Prefix"));
        Assert.Equal("kept", Single(head, "X-Forwarded-Other"));
        Assert.Equal(["X-Original-Other"], head.Headers.Select(h => h.Name).Where(name => name.StartsWith("X-Original-", StringComparison.OrdinalIgnoreCase)));
    }

    [Fact]
    public void Without_a_host_or_remote_address_the_forwarded_set_stays_well_formed()
    {
        var context = new DefaultHttpContext();
        context.Request.Method = "GET";
        context.Request.Scheme = "http";

        RequestHead head = RequestHeadBuilder.Build(context, "/", "/session/s");

        Assert.Equal(string.Empty, Single(head, "X-Forwarded-For"));
        Assert.DoesNotContain(head.Headers, h => h.Name == "X-Forwarded-Host");
        Assert.Equal("/session/s", Single(head, "X-Forwarded-Prefix"));
    }

    [Theory]
    [InlineData("Transfer-Encoding\u000b")]
    [InlineData("X\u0001a")]
    [InlineData("X\u007fa")]
    [InlineData("X(a)")]
    [InlineData("X,a")]
    [InlineData("X/a")]
    [InlineData("X;a")]
    [InlineData("X<a>")]
    [InlineData("X=a")]
    [InlineData("X?a")]
    [InlineData("X@a")]
    [InlineData("X[a]")]
    [InlineData("X\\a")]
    [InlineData("X{a}")]
    [InlineData("X\"a")]
    [InlineData("X a")]
    [InlineData("X\ta")]
    [InlineData("X\u00e9a")]
    public void A_header_name_outside_token_is_a_problem(string name)
    {
        DefaultHttpContext context = Context(r => r.Headers[name] = "1");

        RequestHeadBuilder.Build(context, "/", "/session/s", out _, out RequestHeadProblem problem);

        Assert.Equal(RequestHeadProblem.InvalidHeaderName, problem);
    }

    [Fact]
    public void Every_token_character_is_accepted_in_a_name()
    {
        DefaultHttpContext context = Context(r => r.Headers["!#$%&'*+-.^_`|~09AZaz"] = "1");

        RequestHead head = RequestHeadBuilder.Build(context, "/", "/session/s", out _, out RequestHeadProblem problem);

        Assert.Equal(RequestHeadProblem.None, problem);
        Assert.Equal("1", Single(head, "!#$%&'*+-.^_`|~09AZaz"));
    }

    [Theory]
    [InlineData("Content-Length")]
    [InlineData("X-Content-Length")] // where Kestrel moves the caller's Content-Length when Transfer-Encoding came too
    public void Content_length_beside_transfer_encoding_is_a_problem(string lengthHeader)
    {
        DefaultHttpContext context = Context(r =>
        {
            r.Headers.TransferEncoding = "chunked";
            r.Headers[lengthHeader] = "48";
        });

        RequestHeadBuilder.Build(context, "/", "/session/s", out _, out RequestHeadProblem problem);

        Assert.Equal(RequestHeadProblem.ContentLengthWithTransferEncoding, problem);
    }

    [Theory]
    [InlineData("gzip, chunked", RequestHeadProblem.UnsupportedTransferCoding)]
    [InlineData("deflate,chunked", RequestHeadProblem.UnsupportedTransferCoding)]
    [InlineData("chunked, chunked", RequestHeadProblem.InvalidTransferEncoding)]
    [InlineData("chunked", RequestHeadProblem.None)]
    [InlineData(" Chunked ", RequestHeadProblem.None)]
    public void Only_a_single_chunked_coding_may_cross(string codings, RequestHeadProblem expected)
    {
        DefaultHttpContext context = Context(r => r.Headers.TransferEncoding = codings);

        RequestHeadBuilder.Build(context, "/", "/session/s", out _, out RequestHeadProblem problem);

        Assert.Equal(expected, problem);
    }

    private static string Single(RequestHead head, string name) =>
        Assert.Single(head.Headers, h => string.Equals(h.Name, name, StringComparison.OrdinalIgnoreCase)).Value;

    [Fact]
    public void An_upgrade_request_keeps_its_Upgrade_field_and_still_drops_Connection_and_what_it_names()
    {
        DefaultHttpContext context = Context(r =>
        {
            r.Method = "GET";
            r.Headers.Connection = "Upgrade, X-Private";
            r.Headers.Upgrade = "websocket";
            r.Headers["X-Private"] = "secret";
            r.Headers.SecWebSocketKey = "dGhlIHNhbXBsZSBub25jZQ==";
        });
        context.Features.Set<IHttpUpgradeFeature>(new UpgradableRequest());

        RequestHead head = RequestHeadBuilder.Build(context, "/ws", "/session/abc");

        Assert.True(RequestHeadBuilder.IsUpgrade(context));
        Assert.True(head.IsUpgrade);
        Assert.Contains(new HeaderField("Upgrade", "websocket"), head.Headers);
        Assert.Contains(new HeaderField("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), head.Headers);
        Assert.DoesNotContain(head.Headers, h => h.Name is "Connection" or "X-Private");
    }

    [Fact]
    public void An_Upgrade_field_on_a_request_that_cannot_switch_is_dropped_as_hop_by_hop()
    {
        DefaultHttpContext context = Context(r => r.Headers.Upgrade = "websocket");

        RequestHead head = RequestHeadBuilder.Build(context, "/ws", "/session/abc");

        Assert.False(RequestHeadBuilder.IsUpgrade(context));
        Assert.False(head.IsUpgrade);
    }

    [Fact]
    public void An_HTTP2_extended_CONNECT_goes_on_as_the_HTTP11_upgrade_it_stands_for_with_a_made_up_key()
    {
        DefaultHttpContext context = Context(r =>
        {
            r.Method = "CONNECT";
            r.Headers.SecWebSocketVersion = "13";
        });
        context.Features.Set<IHttpExtendedConnectFeature>(new ExtendedConnect("websocket"));

        RequestHead head = RequestHeadBuilder.Build(context, "/ws", "/session/abc");

        Assert.True(head.IsUpgrade);
        Assert.Equal("GET", head.Method);
        Assert.Contains(new HeaderField("Upgrade", "websocket"), head.Headers);
        Assert.Equal(16, Convert.FromBase64String(Single(head, "Sec-WebSocket-Key")).Length);
        Assert.Equal("13", Single(head, "Sec-WebSocket-Version"));
    }

    private sealed class ExtendedConnect(string protocol) : IHttpExtendedConnectFeature
    {
        public bool IsExtendedConnect => true;

        public string Protocol => protocol;

        public ValueTask<Stream> AcceptAsync() => throw new NotSupportedException();
    }

    private sealed class UpgradableRequest : IHttpUpgradeFeature
    {
        public bool IsUpgradableRequest => true;

        public Task<Stream> UpgradeAsync() => throw new NotSupportedException();
    }
}
