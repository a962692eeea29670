using BenchmarkDotNet.Attributes;
using Microsoft.AspNetCore.Http;
using Tunnel2.Protocol.Heads;
using Tunnel2.ProxyEntry.Heads;

namespace Tunnel2.Benchmarks;

/// <summary>The header mapping at the public edge: Kestrel's request to a request head, a response head to Kestrel's response.</summary>
[MemoryDiagnoser]
public class HeaderMappingBenchmarks
{
    private DefaultHttpContext _request = null!;
    private DefaultHttpContext _response = null!;
    private ResponseHead _responseHead = null!;

    [GlobalSetup]
    public void Setup()
    {
        _request = new DefaultHttpContext();
        _request.Request.Method = "GET";
        _request.Request.Scheme = "http";
        _request.Request.Host = new HostString("tunnel.example", 12000);
        _request.Connection.RemoteIpAddress = System.Net.IPAddress.Parse("203.0.113.7");
        foreach (HeaderField field in SampleHeaders.Request())
        {
            if (!field.Name.StartsWith("X-Forwarded", StringComparison.Ordinal))
            {
                _request.Request.Headers.Append(field.Name, field.Value);
            }
        }

        _request.Request.Headers.Connection = "keep-alive";
        _response = new DefaultHttpContext();
        _responseHead = new ResponseHead(200, SampleHeaders.Response());
    }

    [Benchmark]
    public int RequestToHead() =>
        RequestHeadBuilder.Build(_request, "/loadtest/get?a=1", "/session/22222222-2222-2222-2222-222222222222").Headers.Count;

    [Benchmark]
    public int HeadToResponse()
    {
        _response.Response.Headers.Clear();
        ResponseHeadWriter.Apply(_responseHead, _response.Response);
        return _response.Response.Headers.Count;
    }
}
