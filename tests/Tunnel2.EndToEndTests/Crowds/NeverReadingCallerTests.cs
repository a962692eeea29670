using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Crowds;

/// <summary>
/// One caller asks for a 256 MiB download, reads the head and then nothing. Against the built executables the flow
/// control holds: the backend writes only what the stream's window and the sockets between the hops take, neither
/// tunnel process grows by more than that share (docs/protocol.md, "Memory per uplink": on the default loop listener
/// the body's credit goes back only once the caller's socket has taken the bytes), and once the caller reads again the
/// whole body arrives.
/// </summary>
public sealed class NeverReadingCallerTests
{
    private const string Session = "never-reading";
    private const long BodyBytes = 256L * 1024 * 1024; // far beyond every bound asserted, so a broken one shows
    private const int ChunkBytes = 64 * 1024;
    private static readonly TimeSpan Stalled = TimeSpan.FromSeconds(1);

    [Fact]
    public async Task A_caller_that_stops_reading_a_large_download_holds_the_backend_and_both_processes_to_the_windows_then_gets_it_whole()
    {
        var backend = new CountingDownload();
        await using LoopbackApp app = await LoopbackApp.StartAsync(web => web.Run(backend.AnswerAsync));
        await using ProcessStack stack = await ProcessStack.StartAsync(Session,
            new ProcessStackOptions { BackendUrl = app.Url, ProbePath = CountingDownload.ProbePath });
        await using MemorySampler server = MemorySampler.Start(stack.Server.Id);
        await using MemorySampler client = MemorySampler.Start(stack.Client.Id);
        using Socket caller = await ConnectSmallReceiverAsync(stack.PublicUrl);
        await caller.SendAsync(Encoding.ASCII.GetBytes(
            $"GET /session/{Session}{CountingDownload.BodyPath} HTTP/1.1\r\nHost: {stack.PublicUrl.Authority}\r\nConnection: close\r\n\r\n"));
        long bodyInHead = await ReadHeadAsync(caller);

        long heldBack = await WaitUntilTheBackendStallsAsync(backend);
        long serverGrowth = server.PeakGrowthBytes, clientGrowth = client.PeakGrowthBytes;
        TestContext.Current.TestOutputHelper?.WriteLine(
            $"backend wrote {heldBack / 1024} KiB while the caller read nothing; growth: server {serverGrowth / 1024} KiB, client {clientGrowth / 1024} KiB");
        Assert.True(heldBack <= 64L * 1024 * 1024, $"the backend wrote {heldBack / 1024 / 1024} MiB of the body to a caller that read nothing");
        Assert.True(serverGrowth <= 32L * 1024 * 1024, $"TunnelServer grew by {serverGrowth / 1024 / 1024} MiB holding one unread download");
        Assert.True(clientGrowth <= 48L * 1024 * 1024, $"TunnelClient grew by {clientGrowth / 1024 / 1024} MiB holding one unread download");

        caller.ReceiveBufferSize = 1024 * 1024;
        long body = bodyInHead + await ReadToEndAsync(caller);
        Assert.Equal(BodyBytes, body);
        Assert.False(stack.Server.HasExited || stack.Client.HasExited, "a tunnel process exited during the test");
    }

    /// <summary>A receive buffer of 4 KiB (the kernel doubles it), so the caller's socket itself holds little.</summary>
    private static async Task<Socket> ConnectSmallReceiverAsync(Uri publicUrl)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 4096 };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, publicUrl.Port));
        return socket;
    }

    /// <summary>Reads up to the head's end; returns how many body bytes came with it.</summary>
    private static async Task<long> ReadHeadAsync(Socket caller)
    {
        byte[] buffer = new byte[16 * 1024];
        int filled = 0;
        while (true)
        {
            int got = await caller.ReceiveAsync(buffer.AsMemory(filled));
            Assert.True(got > 0, "the connection closed before the answer's head");
            filled += got;
            int end = buffer.AsSpan(0, filled).IndexOf("\r\n\r\n"u8);
            if (end >= 0)
            {
                string head = Encoding.ASCII.GetString(buffer, 0, end);
                Assert.StartsWith("HTTP/1.1 200", head, StringComparison.Ordinal);
                return filled - end - 4;
            }

            Assert.True(filled < buffer.Length, "the answer's head did not end within 16 KiB");
        }
    }

    /// <summary>Waits until the backend's count has not moved for <see cref="Stalled"/>; returns it.</summary>
    private static async Task<long> WaitUntilTheBackendStallsAsync(CountingDownload backend)
    {
        long last = -1;
        var since = Stopwatch.StartNew();
        await Eventually.WaitUntilAsync(() =>
        {
            long now = backend.Written;
            if (now != last)
            {
                last = now;
                since.Restart();
                return false;
            }

            return now > 0 && since.Elapsed >= Stalled;
        }, "the backend stopped writing to a caller that reads nothing", TimeSpan.FromSeconds(30));
        return last;
    }

    private static async Task<long> ReadToEndAsync(Socket caller)
    {
        byte[] buffer = new byte[256 * 1024];
        long total = 0;
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        while (true)
        {
            int got = await caller.ReceiveAsync(buffer, SocketFlags.None, timeout.Token);
            if (got == 0)
            {
                return total;
            }

            total += got;
        }
    }

    /// <summary>The backend: a probe path, and a 256 MiB body written in 64 KiB writes, counted as each completes.</summary>
    private sealed class CountingDownload
    {
        public const string ProbePath = "/ping";
        public const string BodyPath = "/gigabyte";
        private static readonly byte[] Chunk = new byte[ChunkBytes];
        private long _written;

        public long Written => Interlocked.Read(ref _written);

        public async Task AnswerAsync(HttpContext context)
        {
            if (context.Request.Path != BodyPath)
            {
                await context.Response.WriteAsync("pong");
                return;
            }

            context.Response.ContentLength = BodyBytes;
            for (long sent = 0; sent < BodyBytes; sent += ChunkBytes)
            {
                await context.Response.Body.WriteAsync(Chunk, context.RequestAborted);
                Interlocked.Add(ref _written, ChunkBytes);
            }
        }
    }
}
