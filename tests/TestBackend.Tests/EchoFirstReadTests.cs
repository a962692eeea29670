using System.Globalization;
using System.Net.Sockets;
using System.Text;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.TestBackend.Tests;

/// <summary>
/// The echo answers the first bytes of an upload at once, whatever their size, also when they arrive in the same read as
/// the request's head. It once measured the read after handing it back (AdvanceTo), when the sequence's length is no
/// longer meaningful: with the head and a body of a multiple of 4 KiB in one read it saw 0, skipped the flush, and the
/// answer waited for more body (docs/test-backend.md, "Nothing read after AdvanceTo").
/// </summary>
public sealed class EchoFirstReadTests(BackendFixture fixture)
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(4096)]
    [InlineData(8192)]
    [InlineData(16384)]
    [InlineData(16000)]
    [InlineData(65536)]
    public async Task The_first_bytes_of_an_unfinished_upload_sent_with_the_head_come_back_at_once(int sent)
    {
        using var prompt = CancellationTokenSource.CreateLinkedTokenSource(Token);
        prompt.CancelAfter(TimeSpan.FromSeconds(10));
        Uri backend = fixture.Backend.BaseAddress;
        using var caller = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await caller.ConnectAsync(backend.Host, backend.Port, prompt.Token);
        string head = string.Create(CultureInfo.InvariantCulture,
            $"POST /loadtest/echo HTTP/1.1\r\nHost: echo\r\nContent-Length: {sent + 11}\r\n\r\n");
        byte[] pattern = new byte[sent];
        Random.Shared.NextBytes(pattern);

        await caller.SendAsync((byte[])[.. Encoding.ASCII.GetBytes(head), .. pattern], SocketFlags.None, prompt.Token);
        byte[] answer = await ReceiveAsync(caller, sent, prompt.Token);

        string text = Encoding.Latin1.GetString(answer);
        int headEnd = text.IndexOf("\r\n\r\n", StringComparison.Ordinal) + 4;
        Assert.StartsWith("HTTP/1.1 200", text, StringComparison.Ordinal);
        Assert.Equal(pattern, answer.AsSpan(headEnd).ToArray());
    }

    /// <summary>Reads until the answer's head and <paramref name="bodyBytes"/> of its body are in; fails if they do not come in time.</summary>
    private static async Task<byte[]> ReceiveAsync(Socket caller, int bodyBytes, CancellationToken cancellationToken)
    {
        var received = new MemoryStream();
        byte[] buffer = new byte[64 * 1024];
        while (true)
        {
            string text = Encoding.Latin1.GetString(received.GetBuffer(), 0, (int)received.Length);
            int headEnd = text.IndexOf("\r\n\r\n", StringComparison.Ordinal);
            if (headEnd >= 0 && received.Length - headEnd - 4 >= bodyBytes)
            {
                return received.ToArray();
            }

            int read;
            try
            {
                read = await caller.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);
            }
            catch (OperationCanceledException) when (!Token.IsCancellationRequested)
            {
                Assert.Fail($"No complete answer in 10 s: {received.Length} bytes received, {bodyBytes} body bytes expected.");
                throw;
            }

            Assert.True(read > 0, $"The backend closed the connection after {received.Length} bytes.");
            received.Write(buffer, 0, read);
        }
    }
}
