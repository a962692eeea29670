using System.Net;
using System.Net.Sockets;
using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.EndToEndTests.Crowds;

/// <summary>A request body over the limit is refused cleanly and the uplink keeps serving the others.</summary>
public sealed class RequestBodyLimitTests
{
    private const string Session = "limits";
    private const int Limit = 1024 * 1024;

    [Fact]
    public async Task A_body_over_MaxRequestBodySize_gets_413_problem_and_the_uplink_stays_usable()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync($"--ProxyEntry:Limits:MaxRequestBodySize={Limit}");
        await stack.StartClientAsync(Session);
        Uplink uplink = stack.Registry.GetUplinks(Session).Single();
        using HttpClient http = CallerHttp.Create();

        string answer = await PostWhileReadingAsync(stack.PublicUrl, $"/session/{Session}/loadtest/echo", 2 * Limit);

        Assert.StartsWith("HTTP/1.1 413 ", answer, StringComparison.Ordinal);
        Assert.Contains("Content-Type: application/problem+json", answer, StringComparison.OrdinalIgnoreCase);
        using HttpResponseMessage ping = await http.GetAsync(stack.SessionUrl(Session, "/loadtest/ping"));
        Assert.Equal(HttpStatusCode.OK, ping.StatusCode);
        // Read while it uploads (HttpClient would send the whole body first and leave the echo to the buffers on the way).
        using var content = new PatternContent(Limit / 2);
        content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/octet-stream");
        (DuplexHttp1Client.ResponseHead head, long echoed) = await DuplexHttp1Client.PostAsync(stack.PublicUrl, $"/session/{Session}/loadtest/echo",
            content, async (head, body) => (head, await CountAsync(body)), TestContext.Current.CancellationToken).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(200, head.Status);
        Assert.Equal(Limit / 2, echoed);
        Assert.Same(uplink, stack.Registry.GetUplinks(Session).Single());
        Assert.True(uplink.IsOpen);
    }

    /// <summary>
    /// Posts <paramref name="length"/> bytes and returns the whole answer as text. HttpClient cannot be used: the 413
    /// comes while the upload is still going, the server then closes, and HttpClient reports the failed upload
    /// instead of the answer (curl shows the answer).
    /// </summary>
    private static async Task<string> PostWhileReadingAsync(Uri server, string path, int length)
    {
        using var tcp = new TcpClient();
        await tcp.ConnectAsync(server.Host, server.Port);
        NetworkStream stream = tcp.GetStream();
        string head = $"POST {path} HTTP/1.1\r\nHost: {server.Authority}\r\nContent-Type: application/octet-stream\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n";
        await stream.WriteAsync(Encoding.ASCII.GetBytes(head));
        Task upload = UploadIgnoringRefusalAsync(stream, length);

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var answer = new MemoryStream();
        await stream.CopyToAsync(answer, timeout.Token); // until the server closes
        await upload;
        return Encoding.UTF8.GetString(answer.ToArray());
    }

    private static async Task<long> CountAsync(Stream body)
    {
        byte[] buffer = new byte[64 * 1024];
        long total = 0;
        int read;
        while ((read = await body.ReadAsync(buffer)) > 0)
        {
            total += read;
        }

        return total;
    }

    private static async Task UploadIgnoringRefusalAsync(NetworkStream stream, int length)
    {
        byte[] chunk = new byte[64 * 1024];
        try
        {
            for (int sent = 0; sent < length; sent += chunk.Length)
            {
                await stream.WriteAsync(chunk.AsMemory(0, Math.Min(chunk.Length, length - sent)));
            }
        }
        catch (IOException)
        {
            // The server answered and closed before taking the whole body, as it should.
        }
    }
}
