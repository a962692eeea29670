using System.Diagnostics;
using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Observability;

/// <summary>
/// ASP.NET Core's request log ("Request finished", Microsoft.AspNetCore.Hosting.Diagnostics at Information), which
/// operators turn on for an access log, from the server process on both transports of its public listener: one line per
/// request, saying that request's path and status, with the ids of its request, connection and trace. On the loop the
/// line is written on the thread pool, after Kestrel has reset the request's context for the connection's next one.
/// </summary>
public sealed class RequestLogTests
{
    private const string Session = "request-log";

    /// <summary>The request log on; each console line marked, with the ids the request's scopes and activity give it.</summary>
    private static readonly string[] Logging =
    [
        "--Serilog:MinimumLevel:Override:Microsoft.AspNetCore.Hosting.Diagnostics=Information",
        "--Serilog:WriteTo:0:Args:outputTemplate=reqlog|{SourceContext}|{RequestId}|{ConnectionId}|{TraceId}|{Message:lj}{NewLine}{Exception}",
    ];

    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task Each_request_on_a_kept_alive_connection_gets_its_own_finished_line_with_its_request_connection_and_trace(string transport)
    {
        await using ProcessStack stack = await ProcessStack.StartAsync(Session, [$"--TunnelServer:Public:Transport={transport}", .. Logging]);
        using HttpClient http = CallerHttp.Create(); // one connection, kept alive: each request follows the last on it
        (string Path, HttpStatusCode Status)[] requests =
        [
            ($"/session/{Session}/loadtest/get", HttpStatusCode.OK),
            ("/session/request-log-away-1/loadtest/ping", HttpStatusCode.NotFound),
            ("/session/request-log-away-2/a", HttpStatusCode.NotFound),
            ("/session/request-log-away-3/b", HttpStatusCode.NotFound),
        ];
        var traces = new ActivityTraceId[requests.Length];
        for (int i = 0; i < requests.Length; i++)
        {
            traces[i] = ActivityTraceId.CreateRandom();
            using var request = new HttpRequestMessage(HttpMethod.Get, new Uri(stack.PublicUrl, requests[i].Path));
            request.Headers.TryAddWithoutValidation("traceparent", $"00-{traces[i]}-{ActivitySpanId.CreateRandom()}-01");
            using HttpResponseMessage response = await http.SendAsync(request, TestContext.Current.CancellationToken);
            Assert.Equal(requests[i].Status, response.StatusCode);
        }

        await Eventually.WaitUntilAsync(() => Array.TrueForAll(requests, request => FinishedLines(stack, request.Path).Count > 0),
            $"the server logs each request finished ({transport})");
        for (int i = 0; i < requests.Length; i++)
        {
            string[] fields = Assert.Single(FinishedLines(stack, requests[i].Path));
            Assert.Contains($"{requests[i].Path} - {(int)requests[i].Status}", fields[5], StringComparison.Ordinal);
            Assert.False(string.IsNullOrEmpty(fields[2]), $"no RequestId on: {string.Join('|', fields)}");
            Assert.False(string.IsNullOrEmpty(fields[3]), $"no ConnectionId on: {string.Join('|', fields)}");
            Assert.Equal(traces[i].ToString(), fields[4]);
        }
    }

    /// <summary>The server's "Request finished" lines for <paramref name="path"/>, split into the template's fields.</summary>
    private static List<string[]> FinishedLines(ProcessStack stack, string path) =>
        stack.Server.Output.Split('\n')
            .Select(line => line.TrimEnd('\r').Split('|', 6))
            .Where(fields => fields.Length == 6 && fields[0].EndsWith("reqlog", StringComparison.Ordinal)
                && fields[1] == "Microsoft.AspNetCore.Hosting.Diagnostics"
                && fields[5].StartsWith("Request finished", StringComparison.Ordinal) && fields[5].Contains(path + " ", StringComparison.Ordinal))
            .ToList();
}
