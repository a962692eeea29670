using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>
/// A caller whose request head and the first 16 or 64 KiB of a longer Content-Length body reach the public listener in
/// one send, and whose backend answers before the upload ends: the answer must reach the caller at once, on both public
/// transports. The test backend's echo once withheld such an answer (a flush skipped when the request's head and a body
/// of a multiple of 4 KiB came in one read, docs/test-backend.md); ProxyEntry writes the answer's Data frames (16 KiB,
/// also a multiple of 4 KiB) into the same Kestrel BodyWriter under the same kind of request, so it is checked here.
/// </summary>
public sealed class AnswerDuringUploadTests
{
    private const string Session = "answer-during-upload";
    private const int AnswerBytes = 64 * 1024;
    private const int UnsentBodyBytes = 1024 * 1024;

    private static readonly TimeSpan Prompt = TimeSpan.FromSeconds(10);

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData("Sockets", 16 * 1024)]
    [InlineData("Sockets", 64 * 1024)]
    [InlineData("Loop", 16 * 1024)]
    [InlineData("Loop", 64 * 1024)]
    public async Task A_backend_that_answers_before_reading_the_body_is_heard_while_the_upload_is_unfinished(string transport, int sentBodyBytes)
    {
        await using LoopbackApp backend = await LoopbackApp.StartAsync(app => app.Run(AnswerAtOnceAsync));
        await using ProcessStack stack = await StartAsync(transport, backend.Url);

        (string head, int bodyBytes) = await PostUnfinishedAsync(stack, "/early", sentBodyBytes, AnswerBytes);

        Assert.StartsWith("HTTP/1.1 200", head, StringComparison.Ordinal);
        Assert.Contains($"Content-Length: {AnswerBytes}", head, StringComparison.OrdinalIgnoreCase);
        Assert.Equal(AnswerBytes, bodyBytes);
    }

    [Theory]
    [InlineData("Sockets")]
    [InlineData("Loop")]
    public async Task The_test_backends_echo_answers_the_first_bytes_of_an_unfinished_upload(string transport)
    {
        await using ProcessStack stack = await StartAsync(transport, backendUrl: null);

        foreach (int sentBodyBytes in new[] { 16 * 1024, 64 * 1024 })
        {
            (string head, int bodyBytes) = await PostUnfinishedAsync(stack, "/loadtest/echo", sentBodyBytes, sentBodyBytes);

            Assert.StartsWith("HTTP/1.1 200", head, StringComparison.Ordinal);
            Assert.Equal(sentBodyBytes, bodyBytes);
        }
    }

    /// <summary>Answers 64 KiB with a Content-Length in one write, without reading the request's body.</summary>
    private static Task AnswerAtOnceAsync(HttpContext context)
    {
        context.Response.ContentLength = AnswerBytes;
        return context.Response.Body.WriteAsync(new byte[AnswerBytes], context.RequestAborted).AsTask();
    }

    private static async Task<ProcessStack> StartAsync(string transport, Uri? backendUrl)
    {
        ProcessStack stack = await ProcessStack.StartAsync(Session, new ProcessStackOptions
        {
            ServerArgs = [$"--TunnelServer:Public:Transport={transport}"],
            BackendUrl = backendUrl,
            ProbePath = backendUrl is null ? "/loadtest/ping" : "/probe",
        });
        if (transport == "Loop")
        {
            await stack.Server.WaitForOutputAsync(new Regex("runs on the server's event loop", RegexOptions.None, TimeSpan.FromSeconds(1)));
        }

        return stack;
    }

    /// <summary>
    /// Sends the head of a POST whose Content-Length promises 1 MiB more than <paramref name="sentBodyBytes"/>, together
    /// with that many body bytes in one send, and reads until the answer's head and <paramref name="wantedBodyBytes"/> of
    /// its body are in, within <see cref="Prompt"/>. The rest of the body is never sent.
    /// </summary>
    private static async Task<(string Head, int BodyBytes)> PostUnfinishedAsync(ProcessStack stack, string path, int sentBodyBytes, int wantedBodyBytes)
    {
        using var prompt = CancellationTokenSource.CreateLinkedTokenSource(Token);
        prompt.CancelAfter(Prompt);
        using var caller = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await caller.ConnectAsync(IPAddress.Loopback, stack.PublicUrl.Port, prompt.Token);
        string head = string.Create(CultureInfo.InvariantCulture,
            $"POST /session/{Session}{path} HTTP/1.1\r\nHost: upload\r\nContent-Length: {sentBodyBytes + UnsentBodyBytes}\r\n\r\n");
        byte[] request = [.. Encoding.ASCII.GetBytes(head), .. new byte[sentBodyBytes]];
        await caller.SendAsync(request, SocketFlags.None, prompt.Token);

        var received = new MemoryStream();
        byte[] buffer = new byte[64 * 1024];
        int headEnd = -1;
        while (headEnd < 0 || received.Length - headEnd < wantedBodyBytes)
        {
            int read;
            try
            {
                read = await caller.ReceiveAsync(buffer, SocketFlags.None, prompt.Token);
            }
            catch (OperationCanceledException) when (!Token.IsCancellationRequested)
            {
                Assert.Fail($"{path}: after {Prompt.TotalSeconds} s the caller had {received.Length} bytes of the answer " +
                    $"(head {(headEnd < 0 ? "incomplete" : "complete")}), {wantedBodyBytes} body bytes wanted.");
                throw;
            }

            Assert.True(read > 0, $"{path}: the connection closed after {received.Length} bytes of the answer.");
            received.Write(buffer, 0, read);
            headEnd = headEnd >= 0 ? headEnd : HeadLength(received);
        }

        string text = Encoding.Latin1.GetString(received.GetBuffer(), 0, headEnd);
        return (text, (int)received.Length - headEnd);
    }

    /// <summary>The length of the head and its blank line, or -1 while it is incomplete.</summary>
    private static int HeadLength(MemoryStream received)
    {
        int end = Encoding.Latin1.GetString(received.GetBuffer(), 0, (int)received.Length).IndexOf("\r\n\r\n", StringComparison.Ordinal);
        return end < 0 ? -1 : end + 4;
    }
}
